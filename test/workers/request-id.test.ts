import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import type { RequestLogEntry } from '../../src/middleware/request-log';
import { api, createTestUser, download, expectFailure, json, upload } from './helpers';
import { encodeImage, gradient } from './images';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The app with its log lines collected instead of printed. */
function loggedApp() {
  const entries: RequestLogEntry[] = [];
  const app = createApp({ log: (entry) => entries.push(entry) });
  const request = async (path: string, init: RequestInit = {}) => {
    const ctx = createExecutionContext();
    const response = await app.request(`http://api.test${path}`, init, env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
  return { entries, request };
}

describe('X-Request-Id', () => {
  it('is on every answer: success, failure, unknown path, wrong method, page and download', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const converted = await upload('/api/v1/convert', user.key, await encodeImage('png', gradient(8, 8)), { format: 'webp' });
    const responses = [
      converted,
      await api('/api/v1/me', { key: user.key }),
      await api('/api/v1/me'),
      await api('/api/v1/nowhere'),
      await api('/api/v1/convert'),
      await api('/'),
      await download((await json(converted)).data.download_url),
    ];
    expect(responses.map((response) => response.status)).toEqual([200, 200, 401, 404, 405, 200, 200]);
    const ids = responses.map((response) => response.headers.get('X-Request-Id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is in the failure envelope as error.request_id, the same as the header', async () => {
    for (const response of [await api('/api/v1/me'), await api('/api/v1/nowhere'), await api('/api/v1/me', { method: 'DELETE' })]) {
      const body = await json(response);
      expect(body.error.request_id).toBe(response.headers.get('X-Request-Id'));
    }
  });

  it("keeps the caller's own id when it is well formed, and replaces one that is not", async () => {
    const own = 'retry-7_batch=42';
    const kept = await api('/api/v1/me', { headers: { 'X-Request-Id': own } });
    expect(kept.headers.get('X-Request-Id')).toBe(own);
    expect((await json(kept)).error.request_id).toBe(own);
    for (const bad of ['two words', 'x'.repeat(201), '<script>', 'a/b']) {
      const replaced = await api('/api/v1/me', { headers: { 'X-Request-Id': bad } });
      expect(replaced.headers.get('X-Request-Id'), bad).toMatch(UUID);
    }
  });
});

describe('the request log', () => {
  it('writes one line per request: id, route, user, status, duration, bytes in and out, pipeline peak', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { entries, request } = loggedApp();
    const form = new FormData();
    form.append('file', new File([await encodeImage('png', gradient(64, 48))], 'tile.png'));
    form.append('format', 'webp');
    const body = new Request('http://x', { method: 'POST', body: form });
    const bytes = new Uint8Array(await body.arrayBuffer());
    const response = await request('/api/v1/convert', {
      method: 'POST',
      body: bytes,
      headers: { Authorization: `Bearer ${user.key}`, 'Content-Type': body.headers.get('Content-Type')!, 'Content-Length': String(bytes.length) },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      request_id: response.headers.get('X-Request-Id'),
      method: 'POST',
      route: '/api/v1/convert',
      status: 200,
      user_id: user.id,
      bytes_in: bytes.length,
      bytes_out: new TextEncoder().encode(text).length,
      error_code: null,
      idempotent_replay: false,
    });
    expect(entries[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(entries[0].pipeline_peak_bytes).toBeGreaterThan(64 * 48 * 4);
  });

  it('counts the bytes a download sends: the file for GET, nothing for HEAD', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data } = await json(await upload('/api/v1/convert', user.key, await encodeImage('png', gradient(16, 16)), { format: 'webp' }));
    const { entries, request } = loggedApp();
    const path = new URL(data.download_url).pathname;
    expect((await (await request(path)).arrayBuffer()).byteLength).toBe(data.size);
    await request(path, { method: 'HEAD' });
    expect(entries.map(({ method, status, bytes_out }) => ({ method, status, bytes_out }))).toEqual([
      { method: 'GET', status: 200, bytes_out: data.size },
      { method: 'HEAD', status: 200, bytes_out: 0 },
    ]);
  });

  it('records failures with their code, also where no route matched, and never the download path itself', async () => {
    const user = await createTestUser();
    const { entries, request } = loggedApp();
    await request('/api/v1/nowhere');
    await request('/api/v1/me', { headers: { Authorization: `Bearer ${user.key}` } });
    await request('/api/v1/crop', { method: 'POST', headers: { Authorization: `Bearer ${user.key}` } });
    const missing = await request(`/download/${'ab'.repeat(16)}/png/secret-name.png`);
    await expectFailure(missing, 404, 'NOT_FOUND');
    expect(entries.map(({ route, status, error_code, user_id }) => ({ route, status, error_code, user_id }))).toEqual([
      { route: null, status: 404, error_code: 'NOT_FOUND', user_id: null },
      { route: '/api/v1/me', status: 200, error_code: null, user_id: user.id },
      { route: '/api/v1/crop', status: 422, error_code: 'INVALID_PARAMETERS', user_id: user.id },
      { route: '/download/:uuid/:format/:filename', status: 404, error_code: 'NOT_FOUND', user_id: null },
    ]);
    expect(JSON.stringify(entries)).not.toContain('secret-name');
  });
});
