import { describe, expect, it } from 'vitest';
import { CpuShare } from './cpu-share';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A pause bound far longer than anything a test waits for: whether a run paused shows as seconds
 * against milliseconds, however busy the machine (where the bound itself is tested, a short one).
 */
const LONG_PAUSE_MS = 10_000;
const NOT_PAUSED_MS = LONG_PAUSE_MS / 2;

/** Resolves to how long `promise` took, in ms (timers move the clock between turns). */
async function duration(promise: Promise<unknown>): Promise<number> {
  const started = Date.now();
  await promise;
  return Date.now() - started;
}

describe('CpuShare', () => {
  it('a long run alone only lets the event loop turn', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const left = share.enter();
    const run = share.run();
    expect(run.contended()).toBe(false);
    expect(await duration(run.turn())).toBeLessThan(NOT_PAUSED_MS);
    run.end();
    left();
  });

  it('a long run waits at its turn while a short request is in flight, until it has answered', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const longLeft = share.enter();
    const run = share.run();
    await run.turn(); // now a long run
    const shortLeft = share.enter();
    expect(run.contended()).toBe(true);
    let resumed = false;
    const turn = run.turn().then(() => (resumed = true));
    await sleep(60);
    expect(resumed).toBe(false);
    shortLeft();
    await turn;
    expect(resumed).toBe(true);
    expect(run.contended(), 'still turning often just after the answer').toBe(true);
    run.end();
    longLeft();
  });

  it('after the run, a turn (storing the last part of a large result) does not wait for its own request', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const left = share.enter();
    const run = share.run();
    await run.turn(); // a long run
    run.end();
    expect(await duration(run.turn())).toBeLessThan(NOT_PAUSED_MS);
    left();
  });

  it('a run that ended before its first turn is not counted as long by a later turn', async () => {
    const share = new CpuShare(200);
    const [shortRunLeft, longLeft] = [share.enter(), share.enter()];
    const shortRun = share.run();
    shortRun.end();
    await shortRun.turn();
    const long = share.run();
    // The short run's request is still in flight (answering): the long run waits for it, up to its bound.
    expect(await duration(long.turn())).toBeGreaterThanOrEqual(200);
    shortRunLeft();
    long.end();
    longLeft();
  });

  it('a run paused for a request goes on once that request has become a long run itself', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const [aLeft, bLeft] = [share.enter(), share.enter()];
    const [a, b] = [share.run(), share.run()];
    const paused = duration(a.turn()); // b's request has not reached its first turn: a short one
    await sleep(10);
    await b.turn(); // now a long run: nobody short is left
    expect(await paused).toBeLessThan(NOT_PAUSED_MS);
    [a, b].forEach((run) => run.end());
    aLeft();
    bLeft();
  });

  it('a turn of two passes waits for a request that needs two turns of the event loop to reach its handler', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const left = share.enter();
    const run = share.run();
    await run.turn(); // a long run
    let shortLeft = () => {};
    const arriveInTwoTurns = () => setTimeout(() => setTimeout(() => (shortLeft = share.enter()), 0), 0);

    arriveInTwoTurns();
    let resumed = false;
    const turn = run.turn(2).then(() => (resumed = true));
    await sleep(30);
    expect(resumed, 'waits for the request that came in at the second pass').toBe(false);
    shortLeft();
    await turn;

    arriveInTwoTurns();
    await run.turn(1); // one pass: goes on before the request is in
    expect(share['shortRequests']()).toBe(0);
    await sleep(5);
    shortLeft();
    run.end();
    left();
  });

  it('a run that starts after another request answered takes turns as a run alone', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    share.enter()(); // the previous request of a client that sends one after another
    await sleep(5);
    const left = share.enter();
    const run = share.run();
    expect(run.contended()).toBe(false);
    run.end();
    left();
  });

  it('never waits longer than its bound, however many short requests keep coming', async () => {
    const share = new CpuShare(200);
    const longLeft = share.enter();
    const run = share.run();
    await run.turn();
    const shortLeft = share.enter();
    const waited = await duration(run.turn());
    expect(waited).toBeGreaterThanOrEqual(200);
    expect(waited).toBeLessThan(NOT_PAUSED_MS);
    shortLeft();
    run.end();
    longLeft();
  });

  it('does not wait for other long runs, nor for requests waiting for memory', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const [aLeft, bLeft, cLeft] = [share.enter(), share.enter(), share.enter()];
    const [a, b] = [share.run(), share.run()];
    await Promise.all([a.turn(), b.turn()]);
    const admitted = share.waitForMemory(); // the third request waits for memory
    expect(await duration(Promise.all([a.turn(), b.turn()]))).toBeLessThan(NOT_PAUSED_MS);
    admitted();
    cLeft();
    [a, b].forEach((run) => run.end());
    aLeft();
    bLeft();
  });

  it('keeps the long runs at least half the time under a steady stream of short requests', async () => {
    const share = new CpuShare(LONG_PAUSE_MS);
    const longLeft = share.enter();
    const run = share.run();
    await run.turn();
    const shortLeft = share.enter(); // one short request in flight the whole time
    const started = Date.now();
    let paused = 0;
    while (Date.now() - started < 1500) {
      const sliceStart = Date.now();
      while (Date.now() - sliceStart < 20); // 20 ms of work
      const turnStart = Date.now();
      await run.turn(1, 20);
      paused += Date.now() - turnStart;
    }
    // Without the share it would pause 250 ms after every 20 ms of work (93% of the time).
    expect(paused / (Date.now() - started)).toBeLessThan(0.75);
    expect(run.workedMs()).toBeGreaterThan(0);
    shortLeft();
    run.end();
    longLeft();
  });
});
