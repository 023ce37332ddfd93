import { describe, expect, it } from 'vitest';
import { createTestUser, expectFailure, json, ManualClock } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { AppError } from '../../errors';
import { processingGate } from '../user-gate';
import { idempotency } from './index';

function form(fields: Record<string, string>, file = 'image bytes', filename = 'a.png') {
  const body = new FormData();
  body.append('file', new File([file], filename));
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return body;
}

/** An operation that counts its runs; X-Block holds a run until release(), X-Fail makes it fail. */
function countingOperation() {
  let runs = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  // Each call a second after the one before: the Free rate (2 per second) stays out of the way.
  const clock = new ManualClock();
  const handle = appWith([processingGate, idempotency], async (c) => {
    runs++;
    entered();
    if (c.req.header('X-Block')) await released;
    if (c.req.header('X-Fail')) throw new AppError('UNSUPPORTED_FORMAT', 'not an image');
    const fields = await c.req.parseBody();
    return c.json({ success: true, data: { run: runs, format: fields.format, expires_at: new Date(Date.now() + 3_600_000).toISOString() } });
  }, clock.now);
  const request: typeof handle = (...args) => {
    clock.advance(1000);
    return handle(...args);
  };
  return { request, runs: () => runs, release, inside };
}

const keyed = (key: string, extra: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...extra });

describe('idempotency', () => {
  it('runs a keyed request once and replays its answer to a repeat', async () => {
    const user = await createTestUser();
    const { request, runs } = countingOperation();
    const first = await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('order-1') });
    const again = await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('order-1') });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(first.headers.has('Idempotent-Replayed')).toBe(false);
    expect(runs()).toBe(1);
  });

  it('refuses the same key with another request, and lets other keys and other users be', async () => {
    const [user, other] = [await createTestUser(), await createTestUser()];
    const { request, runs } = countingOperation();
    await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('k') });
    for (const body of [form({ format: 'webp' }), form({ format: 'png' }, 'other bytes'), form({ format: 'png' }, 'image bytes', 'b.png'), form({ format: 'png', quality: '50' })]) {
      const refused = await request(user.key, { method: 'POST', body, headers: keyed('k') });
      const failure = await expectFailure(refused, 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(failure.error.message).toMatch(/different request/);
    }
    expect((await request(user.key, { method: 'POST', body: form({ format: 'webp' }), headers: keyed('k2') })).status).toBe(200);
    expect((await request(other.key, { method: 'POST', body: form({ format: 'webp' }), headers: keyed('k') })).status).toBe(200);
    expect(runs()).toBe(3);
  });

  it('answers a repeat that arrives while the first is still running with 409 and Retry-After', async () => {
    const user = await createTestUser();
    const { request, runs, release, inside } = countingOperation();
    const first = request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('slow', { 'X-Block': '1' }) });
    await inside;
    const meanwhile = await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('slow') });
    await expectFailure(meanwhile, 409, 'IDEMPOTENCY_KEY_IN_USE');
    expect(meanwhile.headers.get('Retry-After')).toBe('1');
    release();
    const answered = await first;
    const later = await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('slow') });
    expect(await later.text()).toBe(await answered.text());
    expect(runs()).toBe(1);
  });

  it('keeps nothing from a failed call: a retry with the key runs again', async () => {
    const user = await createTestUser();
    const { request, runs } = countingOperation();
    await expectFailure(await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('retry', { 'X-Fail': '1' }) }), 422, 'UNSUPPORTED_FORMAT');
    const retried = await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed('retry') });
    expect(retried.status).toBe(200);
    expect((await json(retried)).data.run).toBe(2);
    expect(runs()).toBe(2);
  });

  it('refuses a key that is not 1 to 255 visible ASCII characters', async () => {
    const user = await createTestUser();
    const { request, runs } = countingOperation();
    for (const key of ['', 'with space', 'x'.repeat(256)]) {
      const failure = await expectFailure(await request(user.key, { method: 'POST', body: form({ format: 'png' }), headers: keyed(key) }), 422, 'INVALID_PARAMETERS');
      expect(failure.error.message).toContain('"Idempotency-Key"');
    }
    expect(runs()).toBe(0);
  });
});
