import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { objectKey } from '../../src/storage/results';
import { clockedClient, createTestUser, download, expectFailure, json, ManualClock, upload } from './helpers';
import { encodeImage, gradient } from './images';

async function makeResult() {
  const user = await createTestUser({ plan: 'pro' });
  const response = await upload('/api/v1/convert', user.key, await encodeImage('png', gradient(32, 32)), { format: 'webp' }, 'tile.png');
  const { data } = await json(response);
  return data as { uuid: string; download_url: string; size: number; filename: string };
}

describe('GET /download/<uuid>/<format>/<filename>', () => {
  it('serves the file as an attachment without an API key', async () => {
    const result = await makeResult();
    const response = await download(result.download_url);
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'image/webp',
      'content-disposition': `attachment; filename="tile.webp"; filename*=UTF-8''tile.webp`,
      'x-content-type-options': 'nosniff',
      'accept-ranges': 'bytes',
      'content-length': String(result.size),
    });
    expect(response.headers.get('ETag')).toMatch(/^"[^"]+"$/);
    expect(response.headers.get('Cache-Control')).toMatch(/^private, max-age=\d+/);
    expect((await response.arrayBuffer()).byteLength).toBe(result.size);
  });

  it('answers HEAD with the headers and no body', async () => {
    const result = await makeResult();
    const response = await download(result.download_url, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Length')).toBe(String(result.size));
    expect((await response.arrayBuffer()).byteLength).toBe(0);
    const ranged = await download(result.download_url, { method: 'HEAD', headers: { Range: `bytes=${result.size + 10}-` } });
    expect(ranged.status).toBe(200);
  });

  it('answers If-None-Match with 304', async () => {
    const result = await makeResult();
    const etag = (await download(result.download_url)).headers.get('ETag')!;
    const response = await download(result.download_url, { headers: { 'If-None-Match': etag } });
    expect(response.status).toBe(304);
    expect(response.headers.get('ETag')).toBe(etag);
    expect((await download(result.download_url, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
  });

  it('answers If-Modified-Since with 304 from the Last-Modified it sent, and If-None-Match wins over it', async () => {
    const result = await makeResult();
    const first = await download(result.download_url);
    const lastModified = first.headers.get('Last-Modified')!;
    expect(new Date(lastModified).toUTCString()).toBe(lastModified);
    const unchanged = await download(result.download_url, { headers: { 'If-Modified-Since': lastModified } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('ETag')).toBe(first.headers.get('ETag'));
    expect((await unchanged.arrayBuffer()).byteLength).toBe(0);
    const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await download(result.download_url, { headers: { 'If-Modified-Since': older } })).status).toBe(200);
    // RFC 9110: with If-None-Match present, If-Modified-Since is not looked at.
    expect((await download(result.download_url, { headers: { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified } })).status).toBe(200);
    expect((await download(result.download_url, { method: 'HEAD', headers: { 'If-None-Match': first.headers.get('ETag')! } })).status).toBe(304);
  });

  it('honours a range under If-Range only while the validator names this file', async () => {
    const result = await makeResult();
    const whole = await download(result.download_url);
    const etag = whole.headers.get('ETag')!;
    const lastModified = whole.headers.get('Last-Modified')!;
    const bytes = new Uint8Array(await whole.arrayBuffer());
    const ranged = (ifRange: string) => download(result.download_url, { headers: { Range: 'bytes=0-9', 'If-Range': ifRange } });

    for (const current of [etag, lastModified]) {
      const partial = await ranged(current);
      expect(partial.status, current).toBe(206);
      expect(new Uint8Array(await partial.arrayBuffer())).toEqual(bytes.subarray(0, 10));
    }
    for (const stale of ['"another-version"', `W/${etag}`, new Date(Date.parse(lastModified) - 1000).toUTCString(), 'not a date']) {
      const full = await ranged(stale);
      expect(full.status, stale).toBe(200);
      expect(full.headers.has('Content-Range'), stale).toBe(false);
      expect(new Uint8Array(await full.arrayBuffer())).toEqual(bytes);
    }
  });

  it('serves byte ranges', async () => {
    const result = await makeResult();
    const whole = new Uint8Array(await (await download(result.download_url)).arrayBuffer());
    const first = await download(result.download_url, { headers: { Range: 'bytes=0-9' } });
    expect(first.status).toBe(206);
    expect(first.headers.get('Content-Range')).toBe(`bytes 0-9/${result.size}`);
    expect(new Uint8Array(await first.arrayBuffer())).toEqual(whole.subarray(0, 10));
    const tail = await download(result.download_url, { headers: { Range: 'bytes=-5' } });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 5));
    const open = await download(result.download_url, { headers: { Range: `bytes=${result.size - 3}-` } });
    expect(open.headers.get('Content-Range')).toBe(`bytes ${result.size - 3}-${result.size - 1}/${result.size}`);
    const clamped = await download(result.download_url, { headers: { Range: `bytes=${result.size - 2}-${result.size + 100}` } });
    expect(clamped.status).toBe(206);
    expect(clamped.headers.get('Content-Range')).toBe(`bytes ${result.size - 2}-${result.size - 1}/${result.size}`);
    for (const ignored of ['bytes=0-1,4-5', 'bytes=9-2', 'lines=1-2']) {
      const full = await download(result.download_url, { headers: { Range: ignored } });
      expect(full.status, ignored).toBe(200);
      expect((await full.arrayBuffer()).byteLength).toBe(result.size);
    }
    const outside = await download(result.download_url, { headers: { Range: `bytes=${result.size}-` } });
    await expectFailure(outside, 416, 'RANGE_NOT_SATISFIABLE');
    expect(outside.headers.get('Content-Range')).toBe(`bytes */${result.size}`);
  });

  it('answers unknown and tampered links with 404 NOT_FOUND', async () => {
    const result = await makeResult();
    const url = new URL(result.download_url);
    const [, , uuid, format, filename] = url.pathname.split('/');
    for (const path of [
      `/download/${'0'.repeat(32)}/${format}/${filename}`,
      `/download/${uuid}/png/${filename}`,
      `/download/${uuid}/${format}/other.webp`,
      `/download/${uuid.toUpperCase()}/${format}/${filename}`,
      `/download/not-a-uuid/${format}/${filename}`,
    ]) {
      await expectFailure(await download(`http://x${path}`), 404, 'NOT_FOUND');
    }
  });

  it('answers an expired link with 404 at once, from the cache and from R2, and the scheduled job deletes file and record', async () => {
    const clock = new ManualClock();
    const client = clockedClient(clock);
    const user = await createTestUser({ plan: 'pro' });
    const made = await client.upload('/api/v1/convert', user.key, await encodeImage('png', gradient(32, 32)), { format: 'webp' }, 'tile.png');
    const result = (await json(made)).data as { uuid: string; download_url: string };
    const get = () => client.fetch(`http://api.test${new URL(result.download_url).pathname}`);
    expect((await get()).status).toBe(200);
    expect(await caches.default.match(result.download_url)).toBeDefined(); // kept in this location's cache

    clock.advance(24 * 3_600_000 + 1000);
    await expectFailure(await get(), 404, 'NOT_FOUND'); // the cached copy says when it expires
    expect(await caches.default.match(result.download_url)).toBeUndefined();
    await expectFailure(await get(), 404, 'NOT_FOUND'); // and so does the object in R2
    expect(await env.RESULTS.head(objectKey(result.uuid))).not.toBeNull();

    const later = await client.upload('/api/v1/convert', user.key, await encodeImage('png', gradient(32, 32)), { format: 'webp' }, 'tile.png');
    const live = (await json(later)).data as { uuid: string; download_url: string };
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now().getTime() }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await env.RESULTS.head(objectKey(result.uuid))).toBeNull();
    expect(await env.DB.prepare('SELECT uuid FROM results WHERE uuid = ?1').bind(result.uuid).first()).toBeNull();
    expect(await env.RESULTS.head(objectKey(live.uuid))).not.toBeNull();
  });

  it('writes the file before answering and keeps it for the retention period', async () => {
    const result = await makeResult();
    expect(await env.RESULTS.head(objectKey(result.uuid))).not.toBeNull();
    const row = await env.DB.prepare('SELECT created_at, expires_at FROM results WHERE uuid = ?1').bind(result.uuid).first<{ created_at: string; expires_at: string }>();
    expect(Date.parse(row!.expires_at) - Date.parse(row!.created_at)).toBe(24 * 3_600_000);
  });
});
