import { describe, expect, it } from 'vitest';
import { MemoryAdmission } from '.';
import { MemoryPool } from '../image/codecs/memory-pool';

const MB = 2 ** 20;
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
/** The queue's order and memory rules, apart from refusals of long waits (tested on their own below). */
const WAIT_AS_LONG_AS_IT_TAKES = { maxWaitMs: Infinity };

/** A run admitted when it fits: whether it has started yet, and its release once it has. */
function admitLater(admission: MemoryAdmission, bytes: number) {
  let started = false;
  const release = admission.admit(bytes).then((done) => ((started = true), done));
  return { started: () => started, release };
}

describe('MemoryAdmission', () => {
  it('runs requests together while their predicted peaks fit, and starts a waiting one when enough is released', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const first = await admission.admit(60 * MB);
    const second = await admission.admit(30 * MB);
    expect(admission.activeRuns).toBe(2);
    const third = admitLater(admission, 20 * MB);
    await settle();
    expect(third.started()).toBe(false); // 60 + 30 + 20 > 100
    second();
    await settle();
    expect(third.started()).toBe(true);
    (await third.release)();
    first();
    expect(admission.heldBytes).toBe(0);
  });

  it('lets a small run go past a waiting large one when that does not delay it', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const running = await admission.admit(70 * MB);
    const order: string[] = [];
    const large = admission.admit(80 * MB).then((release) => (order.push('large'), release));
    const small = await admission.admit(1 * MB); // 1 + 80 still fit once the 70 is released
    const upload = await admission.reserve(2 * MB); // a small body too
    expect(admission.heldBytes).toBe(73 * MB);
    running();
    (await large)();
    expect(order).toEqual(['large']);
    small();
    upload.release();
    expect(admission.heldBytes).toBe(0);
  });

  it('keeps arrival order when going past would keep the first in line waiting', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const running = await admission.admit(70 * MB);
    const order: string[] = [];
    const large = admission.admit(90 * MB).then((release) => (order.push('large'), release));
    const smalls = [5, 5, 5].map((mb, i) => admission.admit(mb * MB).then((release) => (order.push(`small ${i}`), release)));
    await settle();
    expect(order).toEqual(['small 0', 'small 1']); // 5 + 5 + 90 = 100: a third would hold up the 90
    running();
    await settle();
    expect(order).toEqual(['small 0', 'small 1', 'large']);
    for (const small of smalls.slice(0, 2)) (await small)();
    await settle();
    expect(order).toEqual(['small 0', 'small 1', 'large', 'small 2']);
    (await large)();
    (await smalls[2])();
    expect(admission.heldBytes).toBe(0);
  });

  it('always admits a request alone, and nothing beside it while it is over the budget', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const result = admission.hold(95 * MB);
    result();
    const alone = await admission.admit(120 * MB); // over, but waiting would wait for nothing
    expect(admission.activeRuns).toBe(1);
    let started = false;
    void admission.admit(10 * MB).then(() => (started = true));
    await settle();
    expect(started).toBe(false);
    alone();
    await settle();
    expect(started).toBe(true);
  });

  it('counts an upload from its size before it is read, and its run takes that count over', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const upload = await admission.reserve(2 * 45 * MB);
    let secondRead = false;
    const second = admission.reserve(2 * 45 * MB).then((hold) => ((secondRead = true), hold));
    await settle();
    expect(secondRead).toBe(false); // 180 MB of bodies would not fit
    upload.shrinkTo(45 * MB); // the parsed form dropped: the pipeline's copy is left
    await settle();
    expect(secondRead).toBe(false); // 45 + 90 > 100
    const run = await admission.admit(55 * MB, { upload }); // its 45 MB input is part of the 55
    expect(admission.heldBytes).toBe(55 * MB);
    upload.release(); // taken over: releasing it again changes nothing
    expect(admission.heldBytes).toBe(55 * MB);
    run();
    (await second).release();
    expect(secondRead).toBe(true);
    expect(admission.heldBytes).toBe(0);
  });

  it('lets waiting runs go before uploads not yet read', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const running = await admission.admit(80 * MB);
    const order: string[] = [];
    const upload = admission.reserve(30 * MB).then((hold) => (order.push('upload'), hold));
    const run = admission.admit(30 * MB).then((release) => (order.push('run'), release));
    await settle();
    running();
    (await run)();
    (await upload).release();
    expect(order).toEqual(['run', 'upload']);
  });

  it('answers 503 SERVER_BUSY with Retry-After to an upload that waited too long', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: 50 });
    const running = await admission.admit(90 * MB);
    const refused = await admission.reserve(40 * MB).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SERVER_BUSY', headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    expect(admission.heldBytes).toBe(90 * MB);
    running();
  });

  it('lets in an upload that can start now even past its deadline (a large body read alone), and refuses at once one that would wait', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: 3000 });
    const past = Date.now() - 100;
    const alone = await admission.reserve(40 * MB, { deadline: past, runBytes: 80 * MB });
    const refused = await admission.reserve(70 * MB, { deadline: past }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SERVER_BUSY' });
    expect(admission.heldBytes).toBe(40 * MB);
    alone.release();
  });

  it('takes an aborted request out of the queue and lets the next one start', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, WAIT_AS_LONG_AS_IT_TAKES);
    const running = await admission.admit(90 * MB);
    const controller = new AbortController();
    const aborted = admission.admit(50 * MB, { signal: controller.signal });
    let nextStarted = false;
    void admission.admit(5 * MB).then(() => (nextStarted = true));
    controller.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    await settle();
    expect(nextStarted).toBe(true);
    running();
  });

  it('lets warm codec memories go when what it counts would not fit beside them', async () => {
    const pool = new MemoryPool(48 * MB);
    pool.give('jpeg-encoder', new WebAssembly.Memory({ initial: 40 * 16 }), 0);
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: Infinity, spare: pool });
    const release = await admission.admit(50 * MB); // 50 + 40 fit
    expect(pool.idleBytes).toBe(40 * MB);
    const upload = await admission.reserve(20 * MB); // 70 + 40 would not
    expect(pool.idleBytes).toBe(0);
    upload.release();
    release();
  });

  it('counts what a lent warm memory holds beyond its instance, until it comes back', async () => {
    const pool = new MemoryPool(48 * MB);
    pool.give('jpeg-encoder', new WebAssembly.Memory({ initial: 40 * 16 }), 0);
    const warm = pool.take('jpeg-encoder')!;
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: Infinity, spare: pool });
    const small = await admission.admit(2 * MB);
    const giveBack = pool.lend(warm, () => 1 * MB); // the small run's encoder counts 1 of its 40 MB
    const large = admitLater(admission, 70 * MB);
    await settle();
    expect(large.started()).toBe(false); // 2 + 39 + 70 > 100
    giveBack();
    await settle();
    expect(large.started()).toBe(true);
    (await large.release)();
    small();
  });

  it('refuses at once, with the expected wait as Retry-After, a request that could not start within the limit', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: 3000 });
    const work = (estimatedMs: number, done = 0) => ({ estimatedMs, doneMs: () => done });
    const large = await admission.admit(80 * MB, { work: work(4000, 1000) }); // 3 s of work left
    const refused = await admission.admit(50 * MB, { work: work(500) }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SERVER_BUSY', headers: { 'Retry-After': '5' } }); // 3 s of work at 1.5x
    const upload = await admission.reserve(10 * MB); // fits now: small work still goes first
    upload.release();
    large();
  });

  it('lets a request wait when the work before it ends within the limit', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: 3000 });
    const large = await admission.admit(80 * MB, { work: { estimatedMs: 1000, doneMs: () => 0 } });
    const waiting = admitLater(admission, 50 * MB);
    await settle();
    expect(waiting.started()).toBe(false);
    large();
    await settle();
    expect(waiting.started()).toBe(true);
    (await waiting.release)();
  });

  it('refuses an upload before its body is read when the runs before it would keep it waiting too long', async () => {
    const admission = new MemoryAdmission(() => 100 * MB, { maxWaitMs: 3000 });
    const large = await admission.admit(90 * MB, { work: { estimatedMs: 6000, doneMs: () => 0 } });
    await expect(admission.reserve(2 * 20 * MB)).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    expect(admission.heldBytes).toBe(90 * MB);
    large();
  });
});
