import { describe, expect, it } from 'vitest';
import { expectedStartMs } from './expected-wait';

const MB = 2 ** 20;

describe('expectedStartMs', () => {
  it('is 0 when the request fits now and nobody waits before it', () => {
    expect(expectedStartMs(10 * MB, 100 * MB, [{ bytes: 60 * MB, workMs: 500 }], [])).toBe(0);
  });

  it('waits for the run whose end frees enough, the runs sharing the thread meanwhile', () => {
    // Two runs share the thread: the 200 ms one ends after 400 ms of time, freeing its 50 MB.
    const running = [
      { bytes: 50 * MB, workMs: 200 },
      { bytes: 40 * MB, workMs: 1000 },
    ];
    expect(expectedStartMs(50 * MB, 100 * MB, running, [])).toBe(400);
    // 70 MB needs both gone: 400 ms, then the other's 800 ms left alone.
    expect(expectedStartMs(70 * MB, 100 * MB, running, [])).toBe(1200);
  });

  it('lets those queued before it start first', () => {
    const running = [{ bytes: 90 * MB, workMs: 300 }];
    const queued = [{ bytes: 80 * MB, workMs: 500 }];
    // The 90 ends at 300; the queued 80 starts and must end (500 more) before 30 more fit.
    expect(expectedStartMs(30 * MB, 100 * MB, running, queued)).toBe(800);
    expect(expectedStartMs(20 * MB, 100 * MB, running, queued)).toBe(300);
  });

  it('admits a request alone whatever its size', () => {
    expect(expectedStartMs(500 * MB, 100 * MB, [], [])).toBe(0);
    expect(expectedStartMs(500 * MB, 100 * MB, [{ bytes: 10 * MB, workMs: 50 }], [])).toBe(50);
  });
});
