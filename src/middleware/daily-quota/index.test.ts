import { describe, expect, it } from 'vitest';
import { createTestUser, expectFailure, usedToday } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { AppError } from '../../errors';
import { dailyQuota, quotaHeadersOnAnswer } from './index';

const request = appWith([quotaHeadersOnAnswer, dailyQuota], (c) => {
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

  it('refuses before the handler runs once the day is used up, with the quota headers', async () => {
    const user = await createTestUser({ usedToday: 15 });
    const response = await request(user.key);
    const body = await expectFailure(response, 429, 'DAILY_LIMIT_REACHED');
    expect(body.error.message).toContain('0 remain');
    expect(response.headers.get('X-RateLimit-Limit')).toBe('15');
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(Number(response.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(await usedToday(user.id)).toBe(15);
  });

  it('gives the conversion back when the client disconnects, even if the work finishes afterwards', async () => {
    const user = await createTestUser({ usedToday: 5 });
    const client = new AbortController();
    const { handler, inside } = handlerThatWaits((signal) => new Promise((resolve) => signal.addEventListener('abort', resolve)));
    const pending = appWith([dailyQuota], handler)(user.key, { signal: client.signal });
    await inside;
    expect(await usedToday(user.id)).toBe(6); // reserved while working
    client.abort();
    expect((await pending).status).toBe(200); // an answer nobody receives
    expect(await usedToday(user.id)).toBe(5);
  });

  it('gives the conversion back when the client disconnects and the work never finishes (a deployment cancels it)', async () => {
    const user = await createTestUser({ usedToday: 5 });
    const client = new AbortController();
    const { handler, inside } = handlerThatWaits(() => new Promise(() => {}));
    void appWith([dailyQuota], handler)(user.key, { signal: client.signal });
    await inside;
    client.abort();
    for (let attempt = 0; attempt < 100 && (await usedToday(user.id)) !== 5; attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await usedToday(user.id)).toBe(5);
  });
});

/** A handler that says when it has started, then waits for `work` (given the request's signal) before answering. */
function handlerThatWaits(work: (signal: AbortSignal) => Promise<unknown>) {
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const handler = async (c: any) => {
    entered();
    await work(c.req.raw.signal);
    return c.text('converted');
  };
  return { handler, inside };
}
