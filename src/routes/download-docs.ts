import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { FORMATS, formatByName, OUTPUT_FORMAT_NAMES } from '../image/formats/index';
import { downloadFailures, headerRefs } from './responses';

const params = z.object({
  uuid: z.string().regex(/^[0-9a-f]{32}$/).openapi({ description: "The result's uuid.", example: '3f2a9c1e5b7d4f60a1b2c3d4e5f60718' }),
  format: z.enum(OUTPUT_FORMAT_NAMES).openapi({ description: "The result's format.", example: 'webp' }),
  filename: z.string().openapi({ description: "The result's filename.", example: 'Canon_40D.webp' }),
});

const conditionalHeaders = z.object({
  Range: z.string().optional().openapi({ description: 'One byte range, e.g. bytes=0-1023 or bytes=-500; several ranges get the whole file.' }),
  'If-Range': z.string().optional().openapi({ description: 'An ETag or Last-Modified from before: the range applies only while it still names this file.' }),
  'If-None-Match': z.string().optional().openapi({ description: 'ETags the client has: 304 when one matches.' }),
  'If-Modified-Since': z.string().optional().openapi({ description: 'An HTTP date: 304 when the file is not newer (ignored when If-None-Match is given).' }),
});

const file = { schema: { type: 'string', format: 'binary' } } as const;
const imageContent = Object.fromEntries(OUTPUT_FORMAT_NAMES.map((name) => [FORMATS[formatByName(name)!].mimeType, file]));
const FILE_HEADERS = ['Content-Disposition', 'ETag', 'Last-Modified', 'Cache-Control', 'Accept-Ranges'] as const;

const DESCRIPTION =
  'No API key: the unguessable link in `download_url` is the capability, valid until the result\'s `expires_at`. Answers with `Content-Disposition: attachment`, ETag and Last-Modified validators, byte ranges, and `Access-Control-Allow-Origin: *` so that a web page holding a link may fetch it.';

/** The download link in the OpenAPI document (the handler is in download.ts). */
export function registerDownloadDocs(app: OpenAPIHono<AppEnv>) {
  for (const method of ['get', 'head'] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: '/download/{uuid}/{format}/{filename}',
      operationId: method === 'get' ? 'downloadResult' : 'describeResult',
      summary: method === 'get' ? 'Download a result' : "A result's headers, without the file",
      description: DESCRIPTION,
      tags: ['Downloads'],
      security: [],
      request: { params, headers: conditionalHeaders },
      responses: {
        200: { description: 'The whole file, as an attachment.', headers: headerRefs(...FILE_HEADERS), content: method === 'get' ? imageContent : undefined },
        ...(method === 'get'
          ? { 206: { description: 'The requested byte range.', headers: headerRefs(...FILE_HEADERS, 'Content-Range'), content: imageContent } }
          : {}),
        304: { description: 'Not modified: If-None-Match or If-Modified-Since says the client has this file.', headers: headerRefs('ETag', 'Last-Modified', 'Cache-Control') },
        ...downloadFailures,
      },
    });
  }
}
