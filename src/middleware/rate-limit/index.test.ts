import { describe, expect, it } from 'vitest';
import { createTestUser, json, ManualClock } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { rateLimit } from './index';

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

describe('rateLimit', () => {
  it('holds a concurrency slot until the handler has answered', async () => {
    const user = await createTestUser(); // Free: 2 per second, 2 at a time
    const clock = new ManualClock();
    const { handler, entered, finish } = blockingHandler(2);
    const request = appWith([rateLimit({ holdsSlot: true })], handler, clock.now);

    const held = [request(user.key, { headers: { 'X-Block': '1' } }), request(user.key, { headers: { 'X-Block': '1' } })];
    await entered;
    clock.advance(1100); // the rate window has passed, the slots have not
    const third = await request(user.key);
    expect(third.status).toBe(429);
    expect((await json(third)).error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringMatching(/concurrent/) });
    expect(third.headers.get('Retry-After')).toBe('1');

    finish();
    expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200]);
    expect((await request(user.key)).status).toBe(200);
  });

  it('holds no slot for calls that do not process images', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clock = new ManualClock();
    const { handler, entered, finish } = blockingHandler(5);
    const request = appWith([rateLimit({ holdsSlot: false })], handler, clock.now);
    const held = Array.from({ length: 5 }, () => request(user.key, { headers: { 'X-Block': '1' } }));
    await entered;
    expect((await request(user.key)).status).toBe(200);
    finish();
    await Promise.all(held);
  });

  it('admits the plan rate per sliding second, and the next request once the oldest leaves the window', async () => {
    const user = await createTestUser(); // Free: 2 per second
    const clock = new ManualClock();
    const request = appWith([rateLimit({ holdsSlot: false })], (c) => c.text('done'), clock.now);
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
