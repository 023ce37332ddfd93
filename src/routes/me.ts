import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { accountSummary } from '../account';
import type { AppEnv } from '../env';
import { apiKeyAuth } from '../middleware/api-key-auth';
import { rateOnly } from '../middleware/user-gate';
import { headerRefs, meFailures } from './responses';
import { AccountSchema, success } from './schemas';

const meRoute = createRoute({
  method: 'get',
  path: '/api/v1/me',
  operationId: 'getAccount',
  summary: "The caller's plan, today's quota, size limits and request rate",
  tags: ['Account'],
  security: [{ ApiKey: [] }],
  middleware: [apiKeyAuth, rateOnly] as const,
  responses: {
    200: {
      description: 'The account (Cache-Control: no-store).',
      headers: headerRefs('Cache-Control'),
      content: { 'application/json': { schema: success(AccountSchema) } },
    },
    ...meFailures,
  },
});

export function registerMe(app: OpenAPIHono<AppEnv>) {
  // Personal and changing with every conversion: no cache may keep it. The count comes with the rate check (one call to the user's Durable Object).
  app.openapi(meRoute, (c) => c.json({ success: true as const, data: accountSummary(c.get('account'), c.get('quotaUsed') ?? 0) }, 200, { 'Cache-Control': 'no-store' }));
}
