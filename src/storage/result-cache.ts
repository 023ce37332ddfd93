/**
 * Results kept in the Cache API of the location that made or last served them (Cloudflare's cache
 * is per data center and is never replicated), until their links expire: a download answered here
 * waits for no far store. Keyed by the download link itself. The Cache API evaluates Range,
 * If-None-Match and If-Modified-Since itself on `match`. On *.workers.dev the platform's cache
 * does nothing, and every download goes to R2.
 */
export interface FileFacts {
  contentType: string;
  contentDisposition: string;
  /** R2's strong ETag, quoted. */
  etag: string;
  /** R2's upload time: what Last-Modified says and R2 compares If-Modified-Since with. */
  uploaded: Date;
  size: number;
  expiresAt: Date;
}

/** When the link expires, by the app's clock (the cache's own clock cannot be moved by tests, nor trusted to the second). */
export const EXPIRES_HEADER = 'X-Result-Expires-At';

export function fileHeaders(facts: FileFacts): Record<string, string> {
  return {
    'Content-Type': facts.contentType,
    'Content-Disposition': facts.contentDisposition,
    ETag: facts.etag,
    'Last-Modified': facts.uploaded.toUTCString(),
  };
}

/** Keeps a file in this location's cache until its link expires; a cache that refuses it only costs a later R2 read. */
export async function cacheResult(downloadUrl: string, body: ReadableStream | Uint8Array, facts: FileFacts, now: Date): Promise<void> {
  const secondsLeft = Math.floor((facts.expiresAt.getTime() - now.getTime()) / 1000);
  if (secondsLeft <= 0) return;
  const headers = {
    ...fileHeaders(facts),
    'Content-Length': String(facts.size),
    'Cache-Control': `public, max-age=${secondsLeft}`,
    [EXPIRES_HEADER]: facts.expiresAt.toISOString(),
  };
  try {
    await caches.default.put(downloadUrl, new Response(body, { headers }));
  } catch (error) {
    console.error(JSON.stringify({ cache: 'put', error: String(error) }));
  }
}

/**
 * This location's copy, answered for `conditions` (a single Range, If-None-Match,
 * If-Modified-Since: 200, 206, 304 or 416); null when not cached here.
 */
export async function cachedResult(downloadUrl: string, conditions: Headers): Promise<Response | null> {
  return (await caches.default.match(new Request(downloadUrl, { headers: conditions }))) ?? null;
}

export async function forgetCachedResult(downloadUrl: string): Promise<void> {
  await caches.default.delete(downloadUrl);
}
