import { describe, expect, it } from 'vitest';
import { createTestUser, json } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { rateLimit } from './index';

describe('rateLimit', () => {
  it('holds a concurrency slot until the handler has answered', async () => {
    const user = await createTestUser(); // Free: 2 per second, 2 at a time
    let finish!: () => void;
    const blocked = new Promise<void>((resolve) => (finish = resolve));
    const request = appWith([rateLimit({ holdsSlot: true })], async (c) => {
      if (c.req.header('X-Block')) await blocked;
      return c.text('done');
    });

    const held = [request(user.key, { headers: { 'X-Block': '1' } }), request(user.key, { headers: { 'X-Block': '1' } })];
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the rate window has passed, the slots have not
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
    let finish!: () => void;
    const blocked = new Promise<void>((resolve) => (finish = resolve));
    const request = appWith([rateLimit({ holdsSlot: false })], async (c) => {
      if (c.req.header('X-Block')) await blocked;
      return c.text('done');
    });
    const held = Array.from({ length: 5 }, () => request(user.key, { headers: { 'X-Block': '1' } }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await request(user.key)).status).toBe(200);
    finish();
    await Promise.all(held);
  });
});
