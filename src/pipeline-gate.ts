/**
 * One image pipeline at a time per isolate. A deployed isolate has 128 MB shared by all its
 * requests, and the memory guard (image/memory-plan.ts) budgets one pipeline run; a second run
 * beside it would double the peak. Queueing costs little: an isolate runs JavaScript on one
 * thread, so two pipelines side by side would only take turns on the CPU anyway. Reading uploads
 * and storing results (I/O) stay outside the gate and overlap freely.
 */
let queue: Promise<unknown> = Promise.resolve();

export function oneAtATime<T>(job: () => Promise<T>): Promise<T> {
  const run = queue.then(job, job);
  queue = run.catch(() => undefined);
  return run;
}
