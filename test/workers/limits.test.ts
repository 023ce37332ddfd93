import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { utcDay } from '../../src/db/usage';
import { userGateOf } from '../../src/user-gate/stub';
import { api, clockedClient, createTestUser, expectFailure, json, ManualClock, upload, usedToday } from './helpers';
import { encodeImage, gradient } from './images';

const smallPng = () => encodeImage('png', gradient(16, 16));

describe('daily quota', () => {
  it('refuses the 16th conversion of a Free day with DAILY_LIMIT_REACHED saying 0 remain', async () => {
    const user = await createTestUser({ usedToday: 14 });
    const clock = new ManualClock();
    const { api, upload } = clockedClient(clock);
    const fifteenth = await upload('/api/v1/convert', user.key, await smallPng(), { format: 'webp' });
    expect(fifteenth.status).toBe(200);
    expect(fifteenth.headers.get('X-RateLimit-Limit')).toBe('15');
    expect(fifteenth.headers.get('X-RateLimit-Remaining')).toBe('0');
    const reset = Number(fifteenth.headers.get('X-RateLimit-Reset'));
    expect(reset * 1000).toBe(Date.parse(utcDay(new Date(clock.now().getTime() + 86_400_000)) + 'T00:00:00Z'));

    clock.advance(1000); // stay inside the 2/s Free rate
    const sixteenth = await upload('/api/v1/convert', user.key, await smallPng(), { format: 'webp' });
    const body = await expectFailure(sixteenth, 429, 'DAILY_LIMIT_REACHED');
    expect(body.error.message).toMatch(/\b0 remain/);
    expect(Number(sixteenth.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(sixteenth.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(await usedToday(user.id)).toBe(15);
    const me = await json(await api('/api/v1/me', { key: user.key }));
    expect(me.data.quota).toMatchObject({ daily_used: 15, daily_remaining: 0 });
  });

  it('spends nothing on failed calls', async () => {
    const user = await createTestUser({ plan: 'pro' });
    await upload('/api/v1/convert', user.key, new Uint8Array([1, 2, 3]), { format: 'png' });
    await upload('/api/v1/convert', user.key, await smallPng(), { format: 'tiff' });
    await upload('/api/v1/crop', user.key, await smallPng(), { x: '10', y: '10', width: '10', height: '10' });
    expect(await usedToday(user.id)).toBe(0);
    expect((await upload('/api/v1/convert', user.key, await smallPng(), { format: 'png' })).status).toBe(200);
    expect(await usedToday(user.id)).toBe(1);
  });

  it('counts Pro conversions without limiting them or sending quota headers', async () => {
    const user = await createTestUser({ plan: 'pro', usedToday: 1000 });
    const response = await upload('/api/v1/convert', user.key, await smallPng(), { format: 'png' });
    expect(response.status).toBe(200);
    expect(response.headers.has('X-RateLimit-Limit')).toBe(false);
    expect(await usedToday(user.id)).toBe(1001);
  });

  it('never lets parallel reservations exceed what is left (40 in parallel, 7 left)', async () => {
    const user = await createTestUser({ usedToday: 8 });
    const gate = userGateOf(env, user.id);
    const now = new Date();
    const caller = { userId: user.id, now: now.getTime(), day: utcDay(now), credential: 'test' };
    const ask = { ...caller, requestsPerSecond: 100, maxConcurrent: 100, reserve: { dailyLimit: 15 } };
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => gate.admit(ask)));
    const admitted = outcomes.filter((outcome) => outcome.admitted);
    expect(admitted).toHaveLength(7);
    expect(outcomes.filter((outcome) => !outcome.admitted && outcome.reason === 'quota')).toHaveLength(33);
    expect(await usedToday(user.id)).toBe(15);
    await gate.finish({ leaseId: (admitted[0] as { leaseId: string }).leaseId, day: caller.day, charged: false });
    expect(await usedToday(user.id)).toBe(14);
  });

  it('admits exactly the conversions left when parallel requests race through the whole API', async () => {
    // A Free user may have 2 requests per second in flight: 6 parallel calls, 1 conversion left.
    const user = await createTestUser({ usedToday: 14 });
    const png = await smallPng();
    const responses = await Promise.all(Array.from({ length: 6 }, () => upload('/api/v1/convert', user.key, png, { format: 'png' })));
    const codes = await Promise.all(responses.map(async (r) => (r.status === 200 ? 'OK' : (await json(r)).error.code)));
    expect(codes.filter((code) => code === 'OK')).toHaveLength(1);
    expect(codes.filter((code) => code === 'DAILY_LIMIT_REACHED').length).toBeGreaterThanOrEqual(1);
    expect(codes.every((code) => ['OK', 'DAILY_LIMIT_REACHED', 'RATE_LIMIT_EXCEEDED'].includes(code))).toBe(true);
    expect(await usedToday(user.id)).toBe(15);
  });

  it('admits exactly k of N calls arriving in parallel waves at the Free rate (k = 3 left)', async () => {
    // Waves of 2 parallel calls, one second apart, so only the quota decides.
    const user = await createTestUser({ usedToday: 12 });
    const png = await smallPng();
    const clock = new ManualClock();
    const { upload } = clockedClient(clock);
    let ok = 0;
    for (let wave = 0; wave < 3; wave++) {
      if (wave > 0) clock.advance(1050);
      const responses = await Promise.all([0, 1].map(() => upload('/api/v1/convert', user.key, png, { format: 'png' })));
      ok += responses.filter((response) => response.status === 200).length;
    }
    expect(ok).toBe(3);
    expect(await usedToday(user.id)).toBe(15);
  });
});

describe('request rate', () => {
  it.each([
    ['free', 2],
    ['pro', 10],
  ] as const)('admits at most the %s plan rate of a burst and sets Retry-After on the rest', async (plan, limit) => {
    const user = await createTestUser({ plan });
    const clock = new ManualClock();
    const { api } = clockedClient(clock);
    const responses = await Promise.all(Array.from({ length: limit + 8 }, () => api('/api/v1/me', { key: user.key })));
    const ok = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status === 429);
    expect(ok).toHaveLength(limit);
    expect(refused).toHaveLength(8);
    for (const response of refused) {
      expect((await json(response)).error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(Number(response.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    }
    clock.advance(1000);
    expect((await api('/api/v1/me', { key: user.key })).status).toBe(200);
  });

  it('carries the daily quota headers on a processing call refused for its rate', async () => {
    const user = await createTestUser({ usedToday: 4 });
    const clock = new ManualClock();
    const { upload } = clockedClient(clock);
    const png = await smallPng();
    for (const remaining of ['10', '9']) {
      const admitted = await upload('/api/v1/convert', user.key, png, { format: 'png' });
      expect(admitted.status).toBe(200);
      expect(admitted.headers.get('X-RateLimit-Remaining')).toBe(remaining);
    }
    const refused = await upload('/api/v1/convert', user.key, png, { format: 'png' });
    await expectFailure(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.headers.get('Retry-After')).toBe('1');
    expect(refused.headers.get('X-RateLimit-Limit')).toBe('15');
    expect(refused.headers.get('X-RateLimit-Remaining')).toBe('9');
    expect(Number(refused.headers.get('X-RateLimit-Reset')) * 1000).toBe(Date.parse(utcDay(new Date(clock.now().getTime() + 86_400_000)) + 'T00:00:00Z'));
  });

  it('counts each user separately', async () => {
    const [a, b] = await Promise.all([createTestUser(), createTestUser()]);
    await Promise.all([0, 1, 2].map(() => api('/api/v1/me', { key: a.key })));
    expect((await api('/api/v1/me', { key: b.key })).status).toBe(200);
  });

  it('holds max_concurrent slots per user until each call ends', async () => {
    const user = await createTestUser();
    const gate = userGateOf(env, user.id);
    const now = new Date();
    const wide = { userId: user.id, now: now.getTime(), day: utcDay(now), credential: 'test', requestsPerSecond: 100, maxConcurrent: 2 };
    const first = await gate.admit(wide);
    const second = await gate.admit(wide);
    const third = await gate.admit(wide);
    expect(first.admitted && second.admitted).toBe(true);
    expect(third).toEqual({ admitted: false, reason: 'concurrency', retryAfterSeconds: 1, used: 0 });
    if (first.admitted && first.leaseId) await gate.finish({ leaseId: first.leaseId, day: wide.day, charged: false });
    expect((await gate.admit(wide)).admitted).toBe(true);
  });
});
