/**
 * How long a request would wait for memory, from what is counted and queued before it: the runs
 * share the isolate's one thread (each at 1/n of it), each frees its bytes when its remaining work
 * is done, and those queued before it start, in order, as bytes free. Work is in estimated ms of
 * CPU; what the runs really get of the thread (short requests go first) is the caller's factor.
 */
export interface Holder {
  bytes: number;
  /** Estimated ms of work left before it frees its bytes (0: frees them at once, e.g. a stored part). */
  workMs: number;
}

/** Ms of work-time until `bytes` fit beside `running` within `budget`, after `queued` (in order) have started; Infinity if never. */
export function expectedStartMs(bytes: number, budget: number, running: Holder[], queued: Holder[]): number {
  const active = running.map((holder) => ({ ...holder }));
  const waiting = queued.map((holder) => ({ ...holder }));
  let held = active.reduce((sum, holder) => sum + holder.bytes, 0);
  let time = 0;
  const fits = (wanted: number) => held === 0 || held + wanted <= budget;
  for (;;) {
    while (waiting.length > 0 && fits(waiting[0].bytes)) {
      const next = waiting.shift()!;
      active.push(next);
      held += next.bytes;
    }
    if (waiting.length === 0 && fits(bytes)) return time;
    if (active.length === 0) return Infinity;
    // The next to finish, all progressing at 1/n of the thread.
    const first = active.reduce((least, holder) => (holder.workMs < least.workMs ? holder : least));
    const step = first.workMs;
    time += step * active.length;
    for (const holder of active) holder.workMs -= step;
    for (let i = active.length - 1; i >= 0; i--) {
      if (active[i].workMs <= 1e-9) {
        held -= active[i].bytes;
        active.splice(i, 1);
      }
    }
  }
}
