import { describe, expect, it } from 'vitest';
import { createTestUser, expectFailure, usedToday } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { AppError } from '../../errors';
import { dailyQuota } from './index';

const request = appWith([dailyQuota], (c) => {
  if (c.req.header('X-Fail') === 'app') throw new AppError('UNSUPPORTED_FORMAT', 'no');
  if (c.req.header('X-Fail') === 'crash') throw new Error('boom');
  return c.text('converted');
});

describe('dailyQuota', () => {
  it('spends one conversion on success and reports what is left', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const response = await request(user.key);
    expect(response.status).toBe(200);
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('11');
    expect(await usedToday(user.id)).toBe(4);
  });

  it('gives the conversion back when the handler fails, however it fails', async () => {
    const user = await createTestUser({ usedToday: 14 });
    await expectFailure(await request(user.key, { headers: { 'X-Fail': 'app' } }), 422, 'UNSUPPORTED_FORMAT');
    await expectFailure(await request(user.key, { headers: { 'X-Fail': 'crash' } }), 500, 'CONVERSION_FAILED');
    expect(await usedToday(user.id)).toBe(14);
    const failed = await request(user.key, { headers: { 'X-Fail': 'app' } });
    expect(failed.headers.get('X-RateLimit-Remaining')).toBe('1');
  });

  it('refuses before the handler runs once the day is used up', async () => {
    const user = await createTestUser({ usedToday: 15 });
    const body = await expectFailure(await request(user.key), 429, 'DAILY_LIMIT_REACHED');
    expect(body.error.message).toContain('0 remain');
    expect(await usedToday(user.id)).toBe(15);
  });
});
