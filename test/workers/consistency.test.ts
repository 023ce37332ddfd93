import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import { FOUND_FRESH_MS } from '../../src/auth/cached-lookups';
import { utcDay } from '../../src/db/usage';
import { userGateOf } from '../../src/user-gate/stub';
import { clockedClient, createTestUser, download, eventually, expectFailure, json, ManualClock, upload, usedToday, usedTodayInD1 } from './helpers';
import { encodeImage, gradient } from './images';
import { WebClient } from './web-client';

/*
 * What each cache may show late (decisions.md "What each cache may show late"): a call's key or
 * session comes from the isolate's cache, its rate, slot and quota from the user's Durable Object,
 * and D1 gets the day's count and the result record beside or behind the answer.
 */

const smallPng = () => encodeImage('png', gradient(16, 16));

/** Every result file in R2 (the keys), to find one left behind without a record. */
async function resultFiles(): Promise<Set<string>> {
  return new Set((await env.RESULTS.list({ prefix: 'results/' })).objects.map((object) => object.key));
}

async function recordsOf(userId: number): Promise<number> {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM results WHERE user_id = ?1').bind(userId).first<{ n: number }>())!.n;
}

/** The app on `clock`, with some of its bindings wrapped (a failing store). */
function appOn(clock: ManualClock, bindings: Partial<Env> = {}) {
  const app = createApp({ clock: clock.now });
  return async (path: string, init: RequestInit & { key: string }) => {
    const ctx = createExecutionContext();
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${init.key}`);
    const response = await app.request(`http://api.test${path}`, { ...init, headers }, { ...env, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
}

function convertForm(file: Uint8Array) {
  const form = new FormData();
  form.append('file', new File([file], 'tile.png'));
  form.append('format', 'webp');
  return form;
}

describe('the daily quota under a burst', () => {
  it('gives exactly one result to 20 parallel calls of a Free user with one conversion left', async () => {
    const user = await createTestUser({ usedToday: 14 });
    const png = await smallPng();
    const responses = await Promise.all(Array.from({ length: 20 }, () => upload('/api/v1/convert', user.key, png, { format: 'webp' })));
    const codes = await Promise.all(responses.map(async (response) => (response.status === 200 ? 'OK' : (await json(response)).error.code)));
    expect(codes.filter((code) => code === 'OK')).toHaveLength(1);
    expect(codes.every((code) => ['OK', 'DAILY_LIMIT_REACHED', 'RATE_LIMIT_EXCEEDED'].includes(code))).toBe(true);
    expect(await recordsOf(user.id)).toBe(1);
    expect(await usedToday(user.id)).toBe(15);
    expect(await eventually(() => usedTodayInD1(user.id), 15)).toBe(15);
  });

  it('writes every charged conversion to D1 within seconds of its answer', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await smallPng();
    for (let i = 0; i < 3; i++) expect((await upload('/api/v1/convert', user.key, png, { format: 'webp' })).status).toBe(200);
    const failed = await upload('/api/v1/convert', user.key, new Uint8Array([1, 2, 3]), { format: 'webp' });
    await expectFailure(failed, 422, 'UNSUPPORTED_FORMAT');
    expect(await eventually(() => usedTodayInD1(user.id), 3, 5000)).toBe(3);
  });
});

describe('a revoked key', () => {
  it('is refused at once everywhere once revoked on the account page', async () => {
    const owner = await createTestUser();
    const browser = new WebClient();
    expect((await browser.signUp(owner.email, 'a long enough passphrase', { api_key: owner.key })).status).toBe(303);
    expect((await upload('/api/v1/convert', owner.key, await smallPng(), { format: 'webp' })).status).toBe(200); // cached now
    const { id } = (await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ?1').bind(owner.id).first<{ id: number }>())!;
    expect((await browser.postForm(`/account/keys/${id}/revoke`, {})).status).toBe(303);
    // The user's Durable Object refuses it from now on, for isolates whose caches still have the key too.
    const now = new Date();
    const asked = await userGateOf(env, owner.id).admit({ userId: owner.id, now: now.getTime(), day: utcDay(now), credential: `key:${id}`, requestsPerSecond: 10, maxConcurrent: null });
    expect(asked).toEqual({ admitted: false, reason: 'unauthorized' });
    await expectFailure(await upload('/api/v1/convert', owner.key, await smallPng(), { format: 'webp' }), 401, 'UNAUTHORIZED');
    const clock = new ManualClock();
    await expectFailure(await clockedClient(clock).api('/api/v1/me', { key: owner.key }), 401, 'UNAUTHORIZED');
  });

  it('is refused at once by processing calls when the operator revokes it in D1, leaving nothing, and by /me within a minute', async () => {
    const user = await createTestUser();
    const clock = new ManualClock();
    const { api, upload } = clockedClient(clock);
    expect((await api('/api/v1/me', { key: user.key })).status).toBe(200); // cached in this isolate now
    await env.DB.prepare('UPDATE api_keys SET revoked_at = ?1 WHERE user_id = ?2').bind(new Date().toISOString(), user.id).run();
    const before = await resultFiles();

    clock.advance(1000);
    await expectFailure(await upload('/api/v1/convert', user.key, await smallPng(), { format: 'webp' }), 401, 'UNAUTHORIZED');
    expect(await recordsOf(user.id)).toBe(0);
    expect(await resultFiles()).toEqual(before);
    expect(await usedToday(user.id)).toBe(0);

    clock.advance(1000);
    expect((await api('/api/v1/me', { key: user.key })).status).toBe(200); // the cache may show it for up to a minute
    clock.advance(FOUND_FRESH_MS);
    const refused = await api('/api/v1/me', { key: user.key });
    const unknown = await api('/api/v1/me', { key: user.key.slice(0, -1) + (user.key.endsWith('A') ? 'B' : 'A') });
    expect((await expectFailure(refused, 401, 'UNAUTHORIZED')).error.message).toBe((await json(unknown)).error.message);
  });

  it('cannot replay an Idempotency-Key answer once revoked on the account page, nor convert anew once the operator revoked it', async () => {
    const owner = await createTestUser({ plan: 'pro' });
    const browser = new WebClient();
    expect((await browser.signUp(owner.email, 'a long enough passphrase', { api_key: owner.key })).status).toBe(303);
    const png = await smallPng();
    const headers = { 'Idempotency-Key': crypto.randomUUID() };
    expect((await upload('/api/v1/convert', owner.key, png, { format: 'webp' }, 'a.png', { headers })).status).toBe(200);
    const { id } = (await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ?1').bind(owner.id).first<{ id: number }>())!;
    expect((await browser.postForm(`/account/keys/${id}/revoke`, {})).status).toBe(303);
    await expectFailure(await upload('/api/v1/convert', owner.key, png, { format: 'webp' }, 'a.png', { headers }), 401, 'UNAUTHORIZED');
  });
});

describe('a logged-out session', () => {
  it('is refused at once by the converter, also with a copy of its cookie', async () => {
    const owner = await createTestUser();
    const browser = new WebClient();
    expect((await browser.signUp(owner.email, 'a long enough passphrase', { api_key: owner.key })).status).toBe(303);
    const token = await browser.csrfToken('/convert');
    const copy = new WebClient(browser.origin);
    copy.session = browser.session!;
    expect((await browser.postForm('/logout', {})).status).toBe(303);
    const form = convertForm(await smallPng());
    const refused = await copy.request('/app/v1/convert', { method: 'POST', body: form, headers: { Origin: copy.origin, 'X-CSRF-Token': token } });
    await expectFailure(refused, 401, 'UNAUTHORIZED');
  });

  it('is refused at once by the converter when the operator ends it in D1 (reset-password)', async () => {
    const owner = await createTestUser();
    const browser = new WebClient();
    expect((await browser.signUp(owner.email, 'a long enough passphrase', { api_key: owner.key })).status).toBe(303);
    const token = await browser.csrfToken('/convert');
    await env.DB.prepare('DELETE FROM sessions WHERE user_id = ?1').bind(owner.id).run();
    const refused = await browser.request('/app/v1/convert', { method: 'POST', body: convertForm(await smallPng()), headers: { Origin: browser.origin, 'X-CSRF-Token': token } });
    await expectFailure(refused, 401, 'UNAUTHORIZED');
    expect(await recordsOf(owner.id)).toBe(0);
  });
});

describe('a plan changed by the operator', () => {
  it('takes effect within a minute', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clock = new ManualClock();
    const { api } = clockedClient(clock);
    expect((await json(await api('/api/v1/me', { key: user.key }))).data.user.plan).toBe('pro');
    await env.DB.prepare("UPDATE users SET plan = 'free' WHERE id = ?1").bind(user.id).run();
    clock.advance(FOUND_FRESH_MS + 1);
    const me = await json(await api('/api/v1/me', { key: user.key }));
    expect(me.data.user.plan).toBe('free');
    expect(me.data.quota.daily_max).toBe(15);
  });
});

describe('storing a result', () => {
  it('can be downloaded the moment its answer arrives', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data } = await json(await upload('/api/v1/convert', user.key, await smallPng(), { format: 'webp' }));
    const file = await download(data.download_url);
    expect(file.status).toBe(200);
    expect((await file.arrayBuffer()).byteLength).toBe(data.size);
  });

  it('leaves neither file nor record behind, and spends nothing, when the R2 upload fails', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const failingPut = new Proxy(env.RESULTS, {
      get: (target, name) => (name === 'put' ? () => Promise.reject(new Error('R2 is unreachable')) : Reflect.get(target, name).bind(target)),
    });
    const before = await resultFiles();
    const response = await appOn(new ManualClock(), { RESULTS: failingPut })('/api/v1/convert', { method: 'POST', body: convertForm(await smallPng()), key: user.key });
    await expectFailure(response, 500, 'CONVERSION_FAILED');
    expect(await recordsOf(user.id)).toBe(0);
    expect(await resultFiles()).toEqual(before);
    expect(await usedToday(user.id)).toBe(0);
  });

  it('leaves neither file nor record behind, and spends nothing, when the D1 record fails', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const failingInsert = new Proxy(env.DB, {
      get: (target, name) =>
        name === 'prepare'
          ? (query: string) => (/^\s*INSERT INTO results/.test(query) ? { bind: () => ({ run: () => Promise.reject(new Error('D1 is unreachable')) }) } : target.prepare(query))
          : Reflect.get(target, name).bind(target),
    });
    const before = await resultFiles();
    const response = await appOn(new ManualClock(), { DB: failingInsert })('/api/v1/convert', { method: 'POST', body: convertForm(await smallPng()), key: user.key });
    await expectFailure(response, 500, 'CONVERSION_FAILED');
    expect(await recordsOf(user.id)).toBe(0);
    expect(await resultFiles()).toEqual(before);
    expect(await usedToday(user.id)).toBe(0);
  });
});
