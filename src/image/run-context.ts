import { AsyncLocalStorage } from 'node:async_hooks';
import type { WasmLedger } from './codecs/wasm-memory';
import type { CpuTurns } from './operations';
import type { StageProfile } from './stage-profile';

/**
 * What belongs to one pipeline run across its awaits (several runs interleave in an isolate): the
 * codec instances it created (their memory is counted in its ledger), and how it shares the
 * isolate's thread with other requests at its yield points.
 */
export interface RunContext {
  ledger: WasmLedger;
  share: CpuTurns;
  /** Estimated nanoseconds of work since the run last took a turn, corrected by `pace`. */
  workSinceTurn: number;
  /** How much longer than estimated the run's work really takes (see doWork). */
  pace: number;
  /** Date.now() when the run last went on after a turn. */
  wentOnAt: number;
  /** Set when the caller asked where the run's time goes (stage-profile.ts). */
  profile: StageProfile | null;
}

/** A fresh run's context. */
export function newRun(ledger: WasmLedger, share: CpuTurns, profile: StageProfile | null = null): RunContext {
  return { ledger, share, workSinceTurn: 0, pace: 1, wentOnAt: Date.now(), profile };
}

const runs = new AsyncLocalStorage<RunContext>();

export function withRunContext<T>(context: RunContext, job: () => Promise<T>): Promise<T> {
  return runs.run(context, job);
}

export function currentRun(): RunContext | undefined {
  return runs.getStore();
}

/**
 * Work between turns while other requests are in the isolate: each of their steps (D1, the rate
 * limiter, R2) can only go on at a turn, so a short request waits at most about this long at each.
 */
export const WORK_BETWEEN_TURNS_CONTENDED_NS = 3_000_000;
/**
 * Work between turns when the run is alone: a request that arrives meanwhile is only delivered to
 * the isolate when its event loop turns (awaiting bands, which are microtasks, does not turn it),
 * and its delivery takes about two turns (measured through wrangler dev: from sent to its handler,
 * 14-30 ms beside a 24 MP WebP run at 10 ms, 24-67 ms at 20). A turn costs ~1.1 ms of idle wall
 * time (workerd's timer granularity, no CPU): a tenth of a run alone, which is the price of that.
 */
export const WORK_BETWEEN_TURNS_ALONE_NS = 10_000_000;

/** Without a share (tests, tools): turns of the event loop only. */
export const ALONE: CpuTurns = {
  contended: () => false,
  turn: () => new Promise((resolve) => setTimeout(resolve, 0)),
};

/**
 * Called as work is done (`ns`: its estimated cost in nanoseconds: the formats' `work` figures and
 * the codecs' factors in codecs/codec.ts): a promise to await when this run has worked long enough
 * since its last turn, otherwise undefined (go on at once). Workers' clocks stand still while code
 * runs, so work is counted, not timed. But the clock moves at each turn, so a turn learns how long
 * the slice of work before it really took, and the estimates that follow are corrected by that
 * pace (a phase of a codec can take three times what its average says). Codecs reach this from
 * inside WebAssembly through JSPI.
 */
export function doWork(ns: number): Promise<void> | undefined {
  const run = runs.getStore();
  if (!run) return undefined;
  run.workSinceTurn += ns * run.pace;
  const between = run.share.sliceNs?.() ?? (run.share.contended() ? WORK_BETWEEN_TURNS_CONTENDED_NS : WORK_BETWEEN_TURNS_ALONE_NS);
  if (run.workSinceTurn < between) return undefined;
  return takeTurn(run);
}

/** A timer turn costs about a millisecond of waiting (its granularity): not the run's work. */
const TURN_MS = 1;

async function takeTurn(run: RunContext): Promise<void> {
  const estimatedMs = run.workSinceTurn / 1e6;
  const alone = !run.share.contended();
  run.workSinceTurn = 0;
  const turnStarted = performance.now();
  // A request takes about two turns to reach its handler (WORK_BETWEEN_TURNS_ALONE_NS): after a
  // slice that could not stop sooner (an AVIF tile is one call), both are taken at once.
  const passes = estimatedMs * 1e6 >= 2 * (alone ? WORK_BETWEEN_TURNS_ALONE_NS : WORK_BETWEEN_TURNS_CONTENDED_NS) ? 2 : 1;
  await run.share.turn(passes, estimatedMs);
  run.profile?.turned(performance.now() - turnStarted);
  // From the last turn to the end of this one: the slice of work and the turn (the clock stood
  // still during the work, but has caught up now).
  const after = Date.now();
  // Only a slice with nobody else in the isolate measures this run's own pace.
  if (alone && !run.share.contended()) {
    const measuredMs = Math.max(0, after - run.wentOnAt - passes * TURN_MS);
    run.pace = Math.min(8, Math.max(0.25, (run.pace * (measuredMs + estimatedMs)) / (2 * estimatedMs)));
  }
  run.wentOnAt = after;
}

/** A copy of pixels into or out of a codec's memory (timed when the run is profiled). */
export function copyPixels(copy: () => void): void {
  const profile = runs.getStore()?.profile;
  if (profile) profile.copy(copy);
  else copy();
}
