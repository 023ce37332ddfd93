import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';

export function registerDownloadDocs(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/download/{uuid}/{format}/{filename}',
    summary: 'Download a result (no API key: the link itself is the capability). HEAD, ETag/If-None-Match and byte ranges are supported.',
    responses: {
      200: { description: 'The file, as an attachment.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      206: { description: 'Partial content for a Range request.' },
      304: { description: 'Not modified (If-None-Match).' },
      404: { description: 'NOT_FOUND: unknown, expired or tampered link.' },
      416: { description: 'RANGE_NOT_SATISFIABLE.' },
    },
  });
}
