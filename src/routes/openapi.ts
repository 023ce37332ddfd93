import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { IDEMPOTENCY_HEADER } from '../middleware/idempotency';
import { registerResponseHeaders } from './responses';
import { StepsSchema } from './step-schemas';

const DESCRIPTION = `Convert, crop, resize and strip metadata from JPEG, PNG, WebP and AVIF images, or chain crop, resize, rotate, flip, blur, sharpen and grayscale in one call (\`POST /api/v1/transform\`). Every processing call answers with JSON holding a download link and spends one conversion.

- **Authentication**: \`Authorization: Bearer <API_KEY>\` on every \`/api/v1\` call; keys are made on the account page. Download links need no key.
- **Errors**: \`{ "success": false, "error": { "code", "message", "request_id" } }\` with the status of the code (each response below lists its codes with an example).
- **Request ids**: every answer carries \`X-Request-Id\` (send your own, 1-200 characters of \`A-Z a-z 0-9 _ - =\`, to have it kept); quote it when something went wrong.
- **Retries**: send \`Idempotency-Key\` on processing calls, and a retry of the same request gets the same result, without a second conversion or quota.
- **Limits**: \`GET /api/v1/me\` has your plan's numbers; processing answers of limited plans carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; every 429 carries \`Retry-After\`. MB means MiB: 10 MB = 10,485,760 bytes.
- **Browsers**: the API has no CORS, on purpose: an API key must not be handed to a web page's visitors. Call it from your server; download links do allow any origin.`;

/** The OpenAPI 3.1 document at /api/v1/openapi.json, generated from the routes' zod schemas. */
export function registerOpenApiDocument(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'Authorization: Bearer <API_KEY>. Keys are created on the account page (or with `npm run admin`).',
  });
  app.openAPIRegistry.registerComponent('parameters', 'IdempotencyKey', {
    name: IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: a repeat of the same request (operation, fields, file) with the same key gets the stored result again, with `Idempotent-Replayed: true`, for as long as the result is kept. The same key with another request is 422 IDEMPOTENCY_KEY_REUSED; a repeat while the first is still running is 409 IDEMPOTENCY_KEY_IN_USE. A failed call keeps nothing. Use a new UUID per request.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  });
  registerResponseHeaders(app);
  // The steps of POST /transform, one schema per op: its `steps` field (JSON text) points here.
  app.openAPIRegistry.register('Steps', StepsSchema);
  app.doc31('/api/v1/openapi.json', (c) => ({
    openapi: '3.1.0',
    info: { title: 'Edge image API', version: '1.0.0', description: DESCRIPTION },
    // The host that served this document, so that /docs ("Try it out") calls its own origin.
    servers: [{ url: new URL(c.req.url).origin, description: 'This service' }],
    tags: [
      { name: 'Account', description: 'Your plan, quota and limits.' },
      { name: 'Processing', description: 'Upload an image, get a download link: the four operations, and transform, which chains steps in one call.' },
      { name: 'Downloads', description: 'Result files, by their link.' },
    ],
  }));
}
