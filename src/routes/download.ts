import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import { findLiveResult } from '../db/results';
import type { AppEnv } from '../env';
import { AppError } from '../errors';
import { cachedResult, cacheResult, EXPIRES_HEADER, fileHeaders, forgetCachedResult, type FileFacts } from '../storage/result-cache';
import { objectKey, type ResultFacts } from '../storage/results';
import { registerDownloadDocs } from './download-docs';
import { rangeRequest, servedRange } from './range';

export const DOWNLOAD_PATH = '/download/:uuid/:format/:filename';

const notFound = () => new AppError('NOT_FOUND', 'This download link is unknown or has expired.');

const unsatisfiable = (size: number) =>
  new AppError('RANGE_NOT_SATISFIABLE', `The requested range is outside the file (${size} bytes).`, undefined, { 'Content-Range': `bytes */${size}` });

/** What every file answer says besides the file's own headers. */
function answerHeaders(expiresAt: Date, now: Date): Record<string, string> {
  const secondsLeft = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  return {
    'X-Content-Type-Options': 'nosniff',
    // private: a shared cache must not serve the file after the link has expired.
    'Cache-Control': `private, max-age=${secondsLeft}, immutable`,
    'Accept-Ranges': 'bytes',
  };
}

/**
 * This location's cached copy (src/storage/result-cache.ts), answered for the request's Range and
 * conditionals by the cache itself; null when it is not cached here, or when the cache's answer
 * does not say when the link expires (then R2 answers).
 */
async function fromCache(c: Context<AppEnv>, downloadUrl: string, now: Date): Promise<Response | null> {
  // One range or none (several get the whole file, as from R2); one that cannot be satisfied whatever the size is R2's to answer.
  const range = c.req.method === 'GET' ? rangeRequest(c.req.header('Range'), Number.MAX_SAFE_INTEGER) : null;
  if (range === 'unsatisfiable') return null;
  const conditions = conditionalHeaders(c.req.raw);
  if (range) conditions.set('Range', range.get('Range')!);
  const cached = await cachedResult(downloadUrl, conditions);
  if (!cached) return null;
  const expiresAt = Date.parse(cached.headers.get(EXPIRES_HEADER) ?? '');
  if (Number.isNaN(expiresAt)) {
    await cached.body?.cancel();
    return null;
  }
  if (expiresAt <= now.getTime()) {
    await cached.body?.cancel();
    c.executionCtx.waitUntil(forgetCachedResult(downloadUrl));
    throw notFound();
  }
  if (cached.status === 416) throw unsatisfiable(Number(/\/(\d+)$/.exec(cached.headers.get('Content-Range') ?? '')?.[1] ?? 0));
  const headers = new Headers(answerHeaders(new Date(expiresAt), now));
  for (const name of ['Content-Type', 'Content-Disposition', 'ETag', 'Last-Modified', 'Content-Length', 'Content-Range']) {
    const value = cached.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  if (c.req.method === 'HEAD' || cached.status === 304) {
    await cached.body?.cancel();
    return new Response(null, { status: cached.status, headers });
  }
  return new Response(cached.body, { status: cached.status, headers });
}

/**
 * The conditional headers R2 and the cache evaluate for us; RFC 9110 §13.2.2: a recipient ignores
 * If-Modified-Since when If-None-Match is present (the Cache API would answer 304 for either).
 */
function conditionalHeaders(request: Request): Headers {
  const conditions = new Headers();
  const ifNoneMatch = request.headers.get('If-None-Match');
  const ifModifiedSince = request.headers.get('If-Modified-Since');
  if (ifNoneMatch !== null) conditions.set('If-None-Match', ifNoneMatch);
  else if (ifModifiedSince !== null) conditions.set('If-Modified-Since', ifModifiedSince);
  return conditions;
}

/** If-Range (RFC 9110 §13.1.5): the file's strong ETag, or exactly its Last-Modified. */
function stillTheSameFile(validator: string, object: R2Object): boolean {
  if (validator.startsWith('"') || validator.startsWith('W/')) return validator === object.httpEtag;
  return Date.parse(validator) === Math.floor(object.uploaded.getTime() / 1000) * 1000;
}

/**
 * The record's facts from the object's own metadata; an object stored before objects carried them
 * has its record read from D1 instead.
 */
async function factsOf(c: Context<AppEnv>, uuid: string, object: R2Object, now: Date): Promise<ResultFacts | null> {
  const facts = object.customMetadata as Partial<ResultFacts> | undefined;
  if (facts?.format && facts.filename && facts.expires_at) return facts as ResultFacts;
  return findLiveResult(c.env.DB, uuid, now);
}

/** R2 answers (one far round trip), and the file is put into this location's cache behind the answer. */
async function fromBucket(c: Context<AppEnv>, downloadUrl: string, now: Date): Promise<Response> {
  const { uuid, format, filename } = c.req.param();
  const key = objectKey(uuid);
  const rangeHeader = c.req.method === 'GET' ? c.req.header('Range') : undefined;
  // The size is not known before R2 answers: a range past the end is found from its answer.
  const range = rangeRequest(rangeHeader, Number.MAX_SAFE_INTEGER);
  const onlyIf = conditionalHeaders(c.req.raw);
  let object = await c.env.RESULTS.get(key, range instanceof Headers ? { onlyIf, range } : { onlyIf });
  if (!object) throw notFound();
  const facts = await factsOf(c, uuid, object, now);
  const expiresAt = facts ? new Date(facts.expires_at) : null;
  if (!facts || !expiresAt || expiresAt <= now || facts.format !== format || facts.filename !== filename) {
    if ('body' in object) await object.body.cancel();
    throw notFound();
  }
  let ranged = range instanceof Headers;
  if (rangeRequest(rangeHeader, object.size) === 'unsatisfiable') {
    if ('body' in object) await object.body.cancel();
    throw unsatisfiable(object.size);
  }
  const ifRange = c.req.header('If-Range')?.trim();
  if ('body' in object && ranged && ifRange !== undefined && !stillTheSameFile(ifRange, object)) {
    await object.body.cancel();
    object = (await c.env.RESULTS.get(key, { onlyIf }))!;
    ranged = false;
  }
  if (!object) throw notFound();

  const file: FileFacts = {
    contentType: object.httpMetadata?.contentType ?? 'application/octet-stream',
    contentDisposition: object.httpMetadata?.contentDisposition ?? 'attachment',
    etag: object.httpEtag,
    uploaded: object.uploaded,
    size: object.size,
    expiresAt,
  };
  c.executionCtx.waitUntil(fillCache(c.env.RESULTS, key, downloadUrl, file, now));
  const headers = { ...fileHeaders(file), ...answerHeaders(expiresAt, now) };
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

/** Links whose copy this isolate is putting into the cache now: ranged requests in parallel start one copy, not one each. */
const filling = new Set<string>();

/** A whole copy for this location's cache, read apart from the client's answer so that neither waits for the other. */
async function fillCache(bucket: R2Bucket, key: string, downloadUrl: string, file: FileFacts, now: Date): Promise<void> {
  if (filling.has(downloadUrl)) return;
  filling.add(downloadUrl);
  try {
    const whole = await bucket.get(key);
    if (whole) await cacheResult(downloadUrl, whole.body, file, now);
  } finally {
    filling.delete(downloadUrl);
  }
}

/**
 * No API key: the unguessable uuid in the link is the capability (decisions.md). Answered from
 * this location's cache where the result was made or last fetched, else from R2; neither waits for
 * D1. A request with If-Range goes to R2, which the validator is compared with.
 */
async function serveFile(c: Context<AppEnv>) {
  if (!/^[0-9a-f]{32}$/.test(c.req.param('uuid') ?? '')) throw notFound();
  const now = c.get('clock')();
  const url = new URL(c.req.url);
  const downloadUrl = url.origin + url.pathname;
  if (c.req.header('If-Range') === undefined) {
    const cached = await fromCache(c, downloadUrl, now);
    if (cached) return cached;
  }
  return fromBucket(c, downloadUrl, now);
}

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
