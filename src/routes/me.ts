import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { dailyUsed, utcDay } from '../db/usage';
import type { AppEnv } from '../env';
import { apiKeyAuth } from '../middleware/api-key-auth';
import { rateLimit } from '../middleware/rate-limit';
import { authFailures } from './responses';
import { AccountSchema, success } from './schemas';

const meRoute = createRoute({
  method: 'get',
  path: '/api/v1/me',
  summary: "The caller's plan, today's quota, size limits and request rate",
  security: [{ ApiKey: [] }],
  middleware: [apiKeyAuth, rateLimit({ holdsSlot: false })] as const,
  responses: {
    200: { description: 'The account.', content: { 'application/json': { schema: success(AccountSchema) } } },
    ...authFailures,
  },
});

export function registerMe(app: OpenAPIHono<AppEnv>) {
  app.openapi(meRoute, async (c) => {
    const { userId, email, plan, subscriptionEndsAt, limits } = c.get('account');
    const used = await dailyUsed(c.env.DB, userId, utcDay(new Date()));
    const max = limits.dailyConversions;
    return c.json(
      {
        success: true as const,
        data: {
          user: { email, plan, is_pro: plan === 'pro', subscription_ends_at: subscriptionEndsAt },
          quota: {
            is_unlimited: max === null,
            daily_used: used,
            daily_remaining: max === null ? null : Math.max(0, max - used),
            daily_max: max,
            max_file_size_mb: limits.maxFileSizeMb,
            max_concurrent: limits.maxConcurrent,
          },
          rate_limit: { requests_per_second: limits.requestsPerSecond },
        },
      },
      200,
    );
  });
}
