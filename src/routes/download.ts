import type { OpenAPIHono } from '@hono/zod-openapi';
import { findLiveResult, type ResultRow } from '../db/results';
import type { AppEnv } from '../env';
import { AppError } from '../errors';
import { formatInfoByName } from '../image/formats';
import { attachmentDisposition } from '../storage/filename';
import { objectKey } from '../storage/results';
import { parseRange } from './range';

const PATH = '/download/:uuid/:format/:filename';

const notFound = () => new AppError('NOT_FOUND', 'This download link is unknown or has expired.');

function fileHeaders(row: ResultRow, now: Date): Record<string, string> {
  const secondsLeft = Math.max(0, Math.floor((Date.parse(row.expires_at) - now.getTime()) / 1000));
  return {
    'Content-Type': formatInfoByName(row.format)?.mimeType ?? 'application/octet-stream',
    'Content-Disposition': attachmentDisposition(row.filename),
    'X-Content-Type-Options': 'nosniff',
    ETag: row.etag,
    // private: a shared cache must not serve the file after the link has expired.
    'Cache-Control': `private, max-age=${secondsLeft}, immutable`,
    'Accept-Ranges': 'bytes',
    'Last-Modified': new Date(row.created_at).toUTCString(),
  };
}

function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/** No API key: the unguessable uuid in the link is the capability (decisions.md). */
export function registerDownload(app: OpenAPIHono<AppEnv>) {
  app.get(PATH, async (c) => {
    const { uuid, format, filename } = c.req.param();
    if (!/^[0-9a-f]{32}$/.test(uuid)) throw notFound();
    const now = c.get('clock')();
    const row = await findLiveResult(c.env.DB, uuid, now);
    if (!row || row.format !== format || row.filename !== filename) throw notFound();

    const headers = fileHeaders(row, now);
    if (etagMatches(c.req.header('If-None-Match'), row.etag)) return c.body(null, 304, headers);

    // HEAD describes the whole file: RFC 9110 says it ignores Range.
    if (c.req.method === 'HEAD') return c.body(null, 200, { ...headers, 'Content-Length': String(row.size) });
    const range = parseRange(c.req.header('Range'), row.size);
    if (range === 'unsatisfiable') {
      throw new AppError('RANGE_NOT_SATISFIABLE', `The requested range is outside the file (${row.size} bytes).`, undefined, {
        'Content-Range': `bytes */${row.size}`,
      });
    }
    const object = await c.env.RESULTS.get(objectKey(uuid), range ? { range } : undefined);
    if (!object) throw notFound();
    if (!range) return c.body(object.body, 200, { ...headers, 'Content-Length': String(row.size) });
    const last = range.offset + range.length - 1;
    return c.body(object.body, 206, {
      ...headers,
      'Content-Length': String(range.length),
      'Content-Range': `bytes ${range.offset}-${last}/${row.size}`,
    });
  });

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
