import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { clockedClient, createTestUser, download, expectFailure, json, ManualClock, upload, usedToday } from './helpers';
import { encodeImage, gradient } from './images';

const resultCount = async (userId: number) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM results WHERE user_id = ?1').bind(userId).first<{ n: number }>())!.n;

describe('Idempotency-Key on processing calls', () => {
  it('gives a retry the same result: same uuid and link, no second conversion, no second quota', async () => {
    const user = await createTestUser({ usedToday: 13 });
    const png = await encodeImage('png', gradient(24, 16));
    // Each call builds its own multipart body, with its own boundary, as a retrying client would.
    const first = await upload('/api/v1/resize', user.key, png, { width: '12', format: 'webp' }, 'tile.png', { headers: { 'Idempotency-Key': 'resize-tile-1' } });
    expect(first.status).toBe(200);
    const retry = await upload('/api/v1/resize', user.key, png, { width: '12', format: 'webp' }, 'tile.png', { headers: { 'Idempotency-Key': 'resize-tile-1' } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('Idempotent-Replayed')).toBe('true');
    const [a, b] = [await json(first), await json(retry)];
    expect(b).toEqual(a);
    expect(a.data).toMatchObject({ width: 12, height: 8, format: 'webp' });
    expect(await usedToday(user.id)).toBe(14);
    expect(await resultCount(user.id)).toBe(1);
    expect(retry.headers.get('X-RateLimit-Remaining')).toBe('1');
    expect((await download(b.data.download_url)).status).toBe(200);
  });

  it('replays even once the daily quota is used up, since a replay spends nothing', async () => {
    const user = await createTestUser({ usedToday: 14 });
    const clock = new ManualClock();
    const { upload } = clockedClient(clock);
    const png = await encodeImage('png', gradient(8, 8));
    const first = await upload('/api/v1/convert', user.key, png, { format: 'jpg' }, 'a.png', { headers: { 'Idempotency-Key': 'last-one' } });
    expect(first.status).toBe(200);
    clock.advance(1000);
    await expectFailure(await upload('/api/v1/convert', user.key, png, { format: 'jpg' }, 'a.png'), 429, 'DAILY_LIMIT_REACHED');
    clock.advance(1000);
    const replay = await upload('/api/v1/convert', user.key, png, { format: 'jpg' }, 'a.png', { headers: { 'Idempotency-Key': 'last-one' } });
    expect(replay.status).toBe(200);
    expect((await json(replay)).data.uuid).toBe((await json(first)).data.uuid);
    expect(replay.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(await usedToday(user.id)).toBe(15);
  });

  it('refuses the key for another request: other operation, parameters or file', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', gradient(8, 8));
    const headers = { 'Idempotency-Key': 'one-request-only' };
    expect((await upload('/api/v1/convert', user.key, png, { format: 'jpg' }, 'a.png', { headers })).status).toBe(200);
    for (const [path, file, fields] of [
      ['/api/v1/convert', png, { format: 'png' }],
      ['/api/v1/remove-metadata', png, { format: 'jpg' }],
      ['/api/v1/convert', await encodeImage('png', gradient(8, 9)), { format: 'jpg' }],
    ] as const) {
      await expectFailure(await upload(path, user.key, file, fields, 'a.png', { headers }), 422, 'IDEMPOTENCY_KEY_REUSED');
    }
    expect(await usedToday(user.id)).toBe(1);
  });

  it('makes one conversion of concurrent duplicates: the others get it replayed or are told to retry', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', gradient(64, 64));
    const headers = { 'Idempotency-Key': 'burst' };
    const responses = await Promise.all(Array.from({ length: 4 }, () => upload('/api/v1/convert', user.key, png, { format: 'avif' }, 'a.png', { headers })));
    const outcomes = await Promise.all(responses.map(async (response) => ({ status: response.status, body: await json(response) })));
    expect(outcomes.every(({ status, body }) => status === 200 || (status === 409 && body.error.code === 'IDEMPOTENCY_KEY_IN_USE'))).toBe(true);
    const uuids = new Set(outcomes.filter(({ status }) => status === 200).map(({ body }) => body.data.uuid));
    expect(uuids.size).toBe(1);
    expect(await usedToday(user.id)).toBe(1);
    expect(await resultCount(user.id)).toBe(1);
    const afterwards = await upload('/api/v1/convert', user.key, png, { format: 'avif' }, 'a.png', { headers });
    expect((await json(afterwards)).data.uuid).toBe([...uuids][0]);
  });

  it('runs afresh once the first result has expired', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clock = new ManualClock();
    const { upload } = clockedClient(clock);
    const png = await encodeImage('png', gradient(8, 8));
    const headers = { 'Idempotency-Key': 'daily-report' };
    const first = await json(await upload('/api/v1/convert', user.key, png, { format: 'webp' }, 'a.png', { headers }));
    clock.advance(24 * 3_600_000 - 1000);
    expect((await json(await upload('/api/v1/convert', user.key, png, { format: 'webp' }, 'a.png', { headers }))).data.uuid).toBe(first.data.uuid);
    clock.advance(2000);
    const fresh = await json(await upload('/api/v1/convert', user.key, png, { format: 'webp' }, 'a.png', { headers }));
    expect(fresh.success).toBe(true);
    expect(fresh.data.uuid).not.toBe(first.data.uuid);
  });
});
