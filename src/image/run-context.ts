import { AsyncLocalStorage } from 'node:async_hooks';
import type { WasmLedger } from './codecs/wasm-memory';

/**
 * What belongs to one pipeline run across its awaits (several runs interleave in an isolate): the
 * codec instances it created (their memory is counted in its ledger), and whether other runs are
 * waiting for the CPU, so its long steps should let them in.
 */
export interface RunContext {
  ledger: WasmLedger;
  contended: () => boolean;
  /** Pixels worked through since the run last let others in. */
  pixelsSinceYield: number;
}

const runs = new AsyncLocalStorage<RunContext>();

export function withRunContext<T>(context: RunContext, job: () => Promise<T>): Promise<T> {
  return runs.run(context, job);
}

export function currentRun(): RunContext | undefined {
  return runs.getStore();
}

/**
 * About 10-20 ms of work in any step: an isolate runs one piece of JavaScript at a time, so a 32x32
 * request beside a 24 MP one would otherwise wait for all of it. A yield costs a macrotask (~1 ms).
 */
const PIXELS_BETWEEN_YIELDS = 1_000_000;
/**
 * A run alone still yields now and then (about every 50-80 ms of work): a request that arrives
 * meanwhile is only delivered to the isolate when its event loop turns, and only then can it make
 * the run contended. Awaiting bands (microtasks) does not turn it.
 */
const PIXELS_BETWEEN_YIELDS_ALONE = 4_000_000;

/**
 * Called as work is done (`pixels` of it): a promise to await when this run has worked long enough
 * since it last let others in (sooner when other runs wait), otherwise undefined (go on at once).
 * Codecs reach it from inside WebAssembly through JSPI (codecs/codec.ts).
 */
export function yieldPoint(pixels: number): Promise<void> | undefined {
  const run = runs.getStore();
  if (!run) return undefined;
  run.pixelsSinceYield += pixels;
  if (run.pixelsSinceYield < PIXELS_BETWEEN_YIELDS) return undefined;
  if (!run.contended() && run.pixelsSinceYield < PIXELS_BETWEEN_YIELDS_ALONE) return undefined;
  run.pixelsSinceYield = 0;
  return new Promise((resolve) => setTimeout(resolve, 0));
}
