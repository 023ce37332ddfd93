import { describe, expect, it } from 'vitest';
import { createTestUser, eventually, expectFailure, json, ManualClock, usedToday } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { AppError } from '../../errors';
import { processingGate, quotaHeadersOnAnswer, rateOnly } from './index';

/** A handler that holds requests marked X-Block until `finish()`, and says when `count` of them are inside. */
function blockingHandler(count: number) {
  let finish!: () => void;
  const released = new Promise<void>((resolve) => (finish = resolve));
  let inside = 0;
  let allInside!: () => void;
  const entered = new Promise<void>((resolve) => (allInside = resolve));
  const handler = async (c: any) => {
    if (c.req.header('X-Block')) {
      if (++inside === count) allInside();
      await released;
    }
    return c.text('done');
  };
  return { handler, entered, finish };
}

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

const converting = appWith([quotaHeadersOnAnswer, processingGate], (c) => {
  if (c.req.header('X-Fail') === 'app') throw new AppError('UNSUPPORTED_FORMAT', 'no');
  if (c.req.header('X-Fail') === 'crash') throw new Error('boom');
  return c.text('converted');
});

describe('processingGate: the request rate and concurrency slots', () => {
  it('holds a concurrency slot until the handler has answered', async () => {
    const user = await createTestUser(); // Free: 2 per second, 2 at a time
    const clock = new ManualClock();
    const { handler, entered, finish } = blockingHandler(2);
    const request = appWith([processingGate], handler, clock.now);

    const held = [request(user.key, { headers: { 'X-Block': '1' } }), request(user.key, { headers: { 'X-Block': '1' } })];
    await entered;
    clock.advance(1100); // the rate window has passed, the slots have not
    const third = await request(user.key);
    expect(third.status).toBe(429);
    expect((await json(third)).error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringMatching(/concurrent/) });
    expect(third.headers.get('Retry-After')).toBe('1');

    finish();
    expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200]);
    clock.advance(1100);
    expect((await request(user.key)).status).toBe(200);
  });

  it('holds no slot for calls that do not process images', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { handler, entered, finish } = blockingHandler(5);
    const request = appWith([rateOnly], handler, new ManualClock().now);
    const held = Array.from({ length: 5 }, () => request(user.key, { headers: { 'X-Block': '1' } }));
    await entered;
    expect((await request(user.key)).status).toBe(200);
    finish();
    await Promise.all(held);
  });

  it('admits the plan rate per sliding second, and the next request once the oldest leaves the window', async () => {
    const user = await createTestUser(); // Free: 2 per second
    const clock = new ManualClock();
    const request = appWith([rateOnly], (c) => c.text('done'), clock.now);
    expect((await request(user.key)).status).toBe(200);
    clock.advance(600);
    expect((await request(user.key)).status).toBe(200);
    clock.advance(300);
    const refused = await request(user.key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('Retry-After')).toBe('1');
    clock.advance(100); // the first request is now a full second old
    expect((await request(user.key)).status).toBe(200);
    expect((await request(user.key)).status).toBe(429);
  });
});

describe('processingGate: the daily quota', () => {
  it('spends one conversion on success and reports what is left', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const response = await converting(user.key);
    expect(response.status).toBe(200);
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('11');
    expect(await usedToday(user.id)).toBe(4);
  });

  it('gives the conversion back when the handler fails, however it fails', async () => {
    const user = await createTestUser({ plan: 'pro', usedToday: 14 });
    await expectFailure(await converting(user.key, { headers: { 'X-Fail': 'app' } }), 422, 'UNSUPPORTED_FORMAT');
    await expectFailure(await converting(user.key, { headers: { 'X-Fail': 'crash' } }), 500, 'CONVERSION_FAILED');
    expect(await eventually(() => usedToday(user.id), 14)).toBe(14);
  });

  it('tells a failure of a limited plan what is left', async () => {
    const user = await createTestUser({ usedToday: 14 });
    const failed = await converting(user.key, { headers: { 'X-Fail': 'app' } });
    expect(failed.headers.get('X-RateLimit-Remaining')).toBe('1');
  });

  it('refuses before the handler runs once the day is used up, with the quota headers', async () => {
    const user = await createTestUser({ usedToday: 15 });
    const response = await converting(user.key);
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
    const pending = appWith([processingGate], handler)(user.key, { signal: client.signal });
    await inside;
    expect(await usedToday(user.id)).toBe(6); // reserved while working
    client.abort();
    expect((await pending).status).toBe(200); // an answer nobody receives
    expect(await eventually(() => usedToday(user.id), 5)).toBe(5);
  });

  it('gives the conversion back when the client disconnects and the work never finishes (a deployment cancels it)', async () => {
    const user = await createTestUser({ usedToday: 5 });
    const client = new AbortController();
    const { handler, inside } = handlerThatWaits(() => new Promise(() => {}));
    void appWith([processingGate], handler)(user.key, { signal: client.signal });
    await inside;
    client.abort();
    expect(await eventually(() => usedToday(user.id), 5)).toBe(5);
  });
});
