import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import { findLiveResult, type ResultRow } from '../db/results';
import type { AppEnv } from '../env';
import { AppError } from '../errors';
import { FORMATS, formatByName } from '../image/formats/index';
import { attachmentDisposition } from '../storage/filename';
import { objectKey } from '../storage/results';
import { registerDownloadDocs } from './download-docs';
import { rangeRequest, servedRange } from './range';

export const DOWNLOAD_PATH = '/download/:uuid/:format/:filename';

const notFound = () => new AppError('NOT_FOUND', 'This download link is unknown or has expired.');

function fileHeaders(row: ResultRow, object: R2Object, now: Date): Record<string, string> {
  const secondsLeft = Math.max(0, Math.floor((Date.parse(row.expires_at) - now.getTime()) / 1000));
  return {
    'Content-Type': mimeTypeOf(row.format),
    'Content-Disposition': attachmentDisposition(row.filename),
    'X-Content-Type-Options': 'nosniff',
    ETag: object.httpEtag,
    // private: a shared cache must not serve the file after the link has expired.
    'Cache-Control': `private, max-age=${secondsLeft}, immutable`,
    'Accept-Ranges': 'bytes',
    // R2's own time: it is what R2 compares If-Modified-Since with.
    'Last-Modified': object.uploaded.toUTCString(),
  };
}

/** The conditional headers R2 evaluates for us (RFC 9110 §13.2.2: If-None-Match wins over If-Modified-Since). */
function conditionalHeaders(request: Request): Headers {
  const conditions = new Headers();
  for (const name of ['If-None-Match', 'If-Modified-Since']) {
    const value = request.headers.get(name);
    if (value !== null) conditions.set(name, value);
  }
  return conditions;
}

const isEtag = (validator: string) => validator.startsWith('"') || validator.startsWith('W/');

/** If-Range (RFC 9110 §13.1.5) with a date: it must be exactly the file's Last-Modified. */
function sameSecond(httpDate: string, uploaded: Date): boolean {
  return Date.parse(httpDate) === Math.floor(uploaded.getTime() / 1000) * 1000;
}

async function serveFile(c: Context<AppEnv>) {
  const { uuid, format, filename } = c.req.param();
  if (!/^[0-9a-f]{32}$/.test(uuid)) throw notFound();
  const now = c.get('clock')();
  const row = await findLiveResult(c.env.DB, uuid, now);
  if (!row || row.format !== format || row.filename !== filename) throw notFound();

  // HEAD describes the whole file: RFC 9110 says it ignores Range.
  const range = c.req.method === 'GET' ? rangeRequest(c.req.header('Range'), row.size) : null;
  if (range === 'unsatisfiable') {
    throw new AppError('RANGE_NOT_SATISFIABLE', `The requested range is outside the file (${row.size} bytes).`, undefined, {
      'Content-Range': `bytes */${row.size}`,
    });
  }
  // If-Range: the range only while the client's validator still names this file, compared
  // strongly; an ETag is known before asking R2, a date needs R2's upload time.
  const ifRange = c.req.header('If-Range')?.trim();
  let ranged = range !== null && (ifRange === undefined || !isEtag(ifRange) || ifRange === row.etag);
  const onlyIf = conditionalHeaders(c.req.raw);
  let object = await c.env.RESULTS.get(objectKey(uuid), ranged && range ? { onlyIf, range } : { onlyIf });
  if (object && 'body' in object && ranged && ifRange !== undefined && !isEtag(ifRange) && !sameSecond(ifRange, object.uploaded)) {
    await object.body.cancel();
    object = await c.env.RESULTS.get(objectKey(uuid), { onlyIf });
    ranged = false;
  }
  if (!object) throw notFound();

  const headers = fileHeaders(row, object, now);
  // A body-less object: If-None-Match or If-Modified-Since says the client's copy is current.
  if (!('body' in object)) return c.body(null, 304, headers);
  if (c.req.method === 'HEAD') {
    await object.body.cancel();
    return c.body(null, 200, { ...headers, 'Content-Length': String(object.size) });
  }
  const served = ranged ? servedRange(object.range, object.size) : null;
  if (!served) return c.body(object.body, 200, { ...headers, 'Content-Length': String(object.size) });
  return c.body(object.body, 206, {
    ...headers,
    'Content-Length': String(served.length),
    'Content-Range': `bytes ${served.offset}-${served.offset + served.length - 1}/${object.size}`,
  });
}

/** No API key: the unguessable uuid in the link is the capability (decisions.md). Ranges and conditionals are R2's. */
export function registerDownload(app: OpenAPIHono<AppEnv>) {
  // The link needs no credentials, so any web page that holds it may read it (fetch, canvas); the API itself has no CORS.
  app.use(
    DOWNLOAD_PATH,
    cors({
      origin: '*',
      allowMethods: ['GET', 'HEAD'],
      allowHeaders: ['Range', 'If-Range', 'If-None-Match', 'If-Modified-Since'],
      exposeHeaders: ['Content-Disposition', 'Content-Range', 'Content-Length', 'ETag', 'Last-Modified', 'X-Request-Id'],
      maxAge: 86_400,
    }),
  );
  app.get(DOWNLOAD_PATH, serveFile);
  registerDownloadDocs(app);
}

function mimeTypeOf(name: string): string {
  const format = formatByName(name);
  return format ? FORMATS[format].mimeType : 'application/octet-stream';
}
