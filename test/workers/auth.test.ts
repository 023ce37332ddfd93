import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-keys';
import { api, clockedClient, createTestUser, expectFailure, json, ManualClock } from './helpers';

describe('API keys', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer token', 'Bearer '],
    ['an unknown key', 'Bearer imgk_000000000000000000000000000000000'],
    ['garbage', 'Bearer !!!'],
  ])('refuses %s with 401 UNAUTHORIZED and WWW-Authenticate', async (_case, authorization) => {
    const response = await api('/api/v1/me', { headers: authorization ? { Authorization: authorization } : {} });
    const body = await expectFailure(response, 401, 'UNAUTHORIZED');
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer');
    expect(body.error.message).not.toMatch(/exist|revoked/i);
  });

  it('gives an unknown and a revoked key the same answer', async () => {
    // (A key this isolate has seen is refused by /me within a minute of its revocation: consistency.test.ts.)
    const user = await createTestUser();
    await env.DB.prepare('UPDATE api_keys SET revoked_at = ?1 WHERE user_id = ?2').bind(new Date().toISOString(), user.id).run();
    const revoked = await api('/api/v1/me', { key: user.key });
    const unknown = await api('/api/v1/me', { key: user.key.slice(0, -1) + (user.key.endsWith('A') ? 'B' : 'A') });
    const withoutId = async (response: Response) => {
      const body = await json(response);
      return { ...body, error: { code: body.error.code, message: body.error.message } };
    };
    expect(await withoutId(revoked)).toEqual(await withoutId(unknown));
    expect(revoked.status).toBe(401);
  });

  it('stores only the SHA-256 hash and the display prefix of a key', async () => {
    const user = await createTestUser();
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE user_id = ?1').bind(user.id).first<Record<string, unknown>>();
    expect(row?.key_hash).toBe(await hashApiKey(user.key));
    expect(row?.prefix).toBe(user.key.slice(0, 12));
    expect(Object.values(row ?? {})).not.toContain(user.key);
  });

  it('records when a key was last used', async () => {
    const user = await createTestUser();
    // The write runs after the answer (waitUntil); this client waits for it.
    await clockedClient(new ManualClock()).api('/api/v1/me', { key: user.key });
    const row = await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE user_id = ?1').bind(user.id).first<{ last_used_at: string | null }>();
    expect(row?.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe('GET /api/v1/me', () => {
  it('shows the Free plan values', async () => {
    const user = await createTestUser({ usedToday: 4 });
    const response = await api('/api/v1/me', { key: user.key });
    expect(response.status).toBe(200);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(await json(response)).toEqual({
      success: true,
      data: {
        user: { email: user.email, plan: 'free', is_pro: false, subscription_ends_at: null },
        quota: { is_unlimited: false, daily_used: 4, daily_remaining: 11, daily_max: 15, max_file_size_mb: 10, max_file_size_bytes: 10_485_760, max_concurrent: 2 },
        rate_limit: { requests_per_second: 2 },
      },
    });
  });

  it('shows the Pro plan values', async () => {
    const endsAt = new Date(Date.now() + 86_400_000).toISOString();
    const user = await createTestUser({ plan: 'pro', subscriptionEndsAt: endsAt, usedToday: 30 });
    const body = await json(await api('/api/v1/me', { key: user.key }));
    expect(body.data).toEqual({
      user: { email: user.email, plan: 'pro', is_pro: true, subscription_ends_at: endsAt },
      quota: { is_unlimited: true, daily_used: 30, daily_remaining: null, daily_max: null, max_file_size_mb: 50, max_file_size_bytes: 52_428_800, max_concurrent: 999 },
      rate_limit: { requests_per_second: 10 },
    });
  });

  it('treats a Pro plan whose subscription has ended as Free', async () => {
    const endedAt = new Date(Date.now() - 1000).toISOString();
    const user = await createTestUser({ plan: 'pro', subscriptionEndsAt: endedAt });
    const body = await json(await api('/api/v1/me', { key: user.key }));
    expect(body.data.user).toMatchObject({ plan: 'free', is_pro: false, subscription_ends_at: endedAt });
    expect(body.data.quota).toMatchObject({ is_unlimited: false, daily_max: 15, max_file_size_mb: 10 });
  });
});
