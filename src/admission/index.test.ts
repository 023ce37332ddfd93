import { describe, expect, it } from 'vitest';
import { MemoryAdmission } from '.';

const MB = 2 ** 20;
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('MemoryAdmission', () => {
  it('runs requests together while their predicted peaks fit, and starts a waiting one when enough is released', async () => {
    const admission = new MemoryAdmission(() => 100 * MB);
    const first = await admission.admit(60 * MB);
    const second = await admission.admit(30 * MB);
    expect(admission.activeRuns).toBe(2);
    let thirdStarted = false;
    const third = admission.admit(20 * MB).then((release) => ((thirdStarted = true), release));
    await settle();
    expect(thirdStarted).toBe(false); // 60 + 30 + 20 > 100
    second();
    await settle();
    expect(thirdStarted).toBe(true);
    (await third)();
    first();
    expect(admission.heldBytes).toBe(0);
  });

  it('keeps arrival order: a small run does not overtake a waiting large one', async () => {
    const admission = new MemoryAdmission(() => 100 * MB);
    const running = await admission.admit(70 * MB);
    const order: string[] = [];
    const large = admission.admit(80 * MB).then((release) => (order.push('large'), release));
    const small = admission.admit(1 * MB).then((release) => (order.push('small'), release));
    await settle();
    expect(order).toEqual([]);
    running();
    (await large)();
    (await small)();
    expect(order).toEqual(['large', 'small']);
  });

  it('counts parsed uploads at once, and always admits a run when nothing else runs', async () => {
    const admission = new MemoryAdmission(() => 100 * MB);
    const upload = admission.hold(95 * MB);
    const alone = await admission.admit(90 * MB); // 185 MB: over, but waiting would wait for nothing
    expect(admission.activeRuns).toBe(1);
    let started = false;
    void admission.admit(10 * MB).then(() => (started = true));
    await settle();
    expect(started).toBe(false);
    upload();
    alone();
    await settle();
    expect(started).toBe(true);
  });

  it('takes an aborted request out of the queue and lets the next one start', async () => {
    const admission = new MemoryAdmission(() => 100 * MB);
    const running = await admission.admit(90 * MB);
    const controller = new AbortController();
    const aborted = admission.admit(50 * MB, controller.signal);
    let nextStarted = false;
    void admission.admit(5 * MB).then(() => (nextStarted = true));
    controller.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    await settle();
    expect(nextStarted).toBe(true);
    running();
  });
});
