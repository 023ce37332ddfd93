/// <reference types="node" />
/**
 * Runs fuzz inputs through a target: classifies the outcome (result / allowed AppError / failure),
 * checks invariants, times every case, and guards against hangs with a watchdog thread (a
 * synchronous infinite loop cannot be interrupted from the test's own thread).
 *
 * Environment:
 *   FUZZ_RUNS     cases per target (default 5000: 20% random input, 80% mutated seeds; a target's
 *                 `runShare` scales it, for the few whose every case costs tens of milliseconds)
 *   FUZZ_SEED     fast-check seed (default: random, printed on failure)
 *   FUZZ_CASE_MS  per-case time limit (default 1000)
 *   FUZZ_HANG_MS  watchdog: a case running this long saves its input and kills the run (default 15000)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { AppError } from '../../../src/errors';
import { FuzzInput } from './arbitraries';
import type { FuzzTarget } from './targets';

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}=${raw}: expected a non-negative integer`);
  return value;
}

export const FUZZ_RUNS = envInt('FUZZ_RUNS', 5_000);
export const FUZZ_SEED = process.env.FUZZ_SEED ? envInt('FUZZ_SEED', 0) : undefined;
export const CASE_LIMIT_MS = envInt('FUZZ_CASE_MS', 1000);
const HANG_MS = envInt('FUZZ_HANG_MS', 15_000);

/** Where failing inputs are written (then moved by hand to regressions/ with a descriptive name). */
export const FAILURE_DIR = path.join(tmpdir(), 'edge-image-fuzz-failures');

export interface Stats {
  cases: number;
  results: number;
  rejections: number;
  slowestMs: number;
  slowestOrigin: string;
  totalMs: number;
}

export function newStats(): Stats {
  return { cases: 0, results: 0, rejections: 0, slowestMs: 0, slowestOrigin: '', totalMs: 0 };
}

export class FuzzFailure extends Error {
  override name = 'FuzzFailure';
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `non-Error thrown: ${String(error)}`;
}

// ---------------------------------------------------------------------------------------------
// Watchdog

const WATCHDOG_MAX_BYTES = 4 << 20;
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { shared, hangMs, dir, max } = workerData;
const head = new Float64Array(shared, 0, 2); // [started at (ms since epoch, 0 = idle), input length]
const name = new Uint8Array(shared, 16, 256);
const data = new Uint8Array(shared, 272, max);
setInterval(() => {
  const started = head[0];
  if (started === 0 || Date.now() - started < hangMs) return;
  const target = Buffer.from(name).toString('latin1').replace(/\\0+$/, '');
  const length = Math.min(head[1], max);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, target + '-hang-' + process.pid + '.bin');
  fs.writeFileSync(file, data.subarray(0, length));
  fs.writeSync(2, '\\nFUZZ HANG: ' + target + ' ran for over ' + hangMs + ' ms on the input saved as ' + file + ' (' + head[1] + ' bytes); killing the test process.\\n');
  process.kill(process.pid, 'SIGKILL');
}, 200);
`;

let watchdog: { worker: Worker; head: Float64Array; name: Uint8Array; data: Uint8Array } | null = null;

export function startWatchdog(): void {
  if (watchdog || HANG_MS === 0) return;
  const shared = new SharedArrayBuffer(272 + WATCHDOG_MAX_BYTES);
  const worker = new Worker(WATCHDOG_SOURCE, { eval: true, workerData: { shared, hangMs: HANG_MS, dir: FAILURE_DIR, max: WATCHDOG_MAX_BYTES } });
  worker.unref();
  watchdog = { worker, head: new Float64Array(shared, 0, 2), name: new Uint8Array(shared, 16, 256), data: new Uint8Array(shared, 272, WATCHDOG_MAX_BYTES) };
}

export async function stopWatchdog(): Promise<void> {
  const w = watchdog;
  watchdog = null;
  if (w) await w.worker.terminate();
}

function watch(targetName: string, bytes: Uint8Array): void {
  if (!watchdog) return;
  watchdog.name.fill(0);
  watchdog.name.set(Buffer.from(targetName.slice(0, 255), 'latin1'));
  watchdog.data.set(bytes.subarray(0, WATCHDOG_MAX_BYTES));
  watchdog.head[1] = bytes.length;
  watchdog.head[0] = Date.now();
}

function unwatch(): void {
  if (watchdog) watchdog.head[0] = 0;
}

// ---------------------------------------------------------------------------------------------
// One case

type Settled = { threw: false; value: unknown } | { threw: true; error: unknown };

function settle(run: () => unknown): Settled {
  try {
    return { threw: false, value: run() };
  } catch (error) {
    return { threw: true, error };
  }
}

async function settleAsync(run: () => unknown): Promise<Settled> {
  try {
    return { threw: false, value: await run() };
  } catch (error) {
    return { threw: true, error };
  }
}

/** Classifies an outcome and checks a result's invariants; throws FuzzFailure for a disallowed one. */
function judge(target: FuzzTarget, settled: Settled, bytes: Uint8Array): 'result' | 'rejection' {
  if (settled.threw) {
    const { error } = settled;
    const codes = target.errorCodes ?? ['UNSUPPORTED_FORMAT'];
    if (error instanceof AppError && !target.neverThrows && codes.includes(error.code)) return 'rejection';
    if (target.anyError && error instanceof Error) return 'rejection';
    throw new FuzzFailure(`${target.name} threw ${describeError(error)}${error instanceof AppError ? ` (code ${error.code}, detail ${JSON.stringify(error.detail)})` : ''}`, { cause: error });
  }
  if (target.check) {
    try {
      target.check(settled.value, bytes);
    } catch (error) {
      throw new FuzzFailure(`${target.name}: invariant broken: ${describeError(error)}`, { cause: error });
    }
  }
  return 'result';
}

function record(target: FuzzTarget, input: FuzzInput, stats: Stats, pristine: Buffer, outcome: 'result' | 'rejection', ms: number): void {
  const bytes = input.bytes;
  stats.cases++;
  stats.totalMs += ms;
  if (outcome === 'result') stats.results++;
  else stats.rejections++;
  if (ms > stats.slowestMs) {
    stats.slowestMs = ms;
    stats.slowestOrigin = input.origin;
  }
  if (!pristine.equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    throw new FuzzFailure(`${target.name} modified its input`);
  }
  if (ms > CASE_LIMIT_MS) throw new FuzzFailure(`${target.name} took ${ms.toFixed(0)} ms (limit ${CASE_LIMIT_MS} ms)`);
}

/**
 * Runs one input through `target`; returns normally for an allowed outcome, throws FuzzFailure
 * (with the original error as `cause`) otherwise. For an `async` target it returns a promise (the
 * case's time includes the awaiting; the watchdog still sees a case that never settles).
 */
export function runCase(target: FuzzTarget, input: FuzzInput, stats: Stats): void | Promise<void> {
  if (target.async) return runAsyncCase(target, input, stats);
  const bytes = input.bytes;
  const pristine = Buffer.from(bytes); // a copy, to catch parsers writing to their input
  watch(target.name, bytes);
  const started = performance.now();
  let outcome: 'result' | 'rejection';
  try {
    outcome = judge(target, settle(() => target.run(bytes)), bytes);
  } finally {
    unwatch();
  }
  let ms = performance.now() - started;
  // A slow case is timed again (the machine may be busy, or a GC ran): only a repeatably slow parser fails.
  for (let retry = 0; retry < 2 && ms > CASE_LIMIT_MS; retry++) {
    const again = performance.now();
    settle(() => target.run(bytes)); // the outcome was classified above
    ms = Math.min(ms, performance.now() - again);
  }
  record(target, input, stats, pristine, outcome, ms);
}

async function runAsyncCase(target: FuzzTarget, input: FuzzInput, stats: Stats): Promise<void> {
  const bytes = input.bytes;
  const pristine = Buffer.from(bytes);
  watch(target.name, bytes);
  const started = performance.now();
  let outcome: 'result' | 'rejection';
  try {
    outcome = judge(target, await settleAsync(() => target.run(bytes)), bytes);
  } finally {
    unwatch();
  }
  let ms = performance.now() - started;
  for (let retry = 0; retry < 2 && ms > CASE_LIMIT_MS; retry++) {
    const again = performance.now();
    await settleAsync(() => target.run(bytes));
    ms = Math.min(ms, performance.now() - again);
  }
  record(target, input, stats, pristine, outcome, ms);
}

// ---------------------------------------------------------------------------------------------
// A property run

/** Writes a failing input where it can be picked up and returns the path. */
export function saveFailure(targetName: string, bytes: Uint8Array, tag: string): string {
  mkdirSync(FAILURE_DIR, { recursive: true });
  const file = path.join(FAILURE_DIR, `${targetName}-${tag}.bin`);
  writeFileSync(file, bytes);
  return file;
}

/**
 * Runs `numRuns` inputs of `arbitrary` through `target` with fast-check (shrinking on failure). On
 * failure, saves the shrunk input and throws a report with the seed, the input's origin, the file
 * and the original error's stack.
 */
export async function fuzz(target: FuzzTarget, arbitrary: fc.Arbitrary<FuzzInput>, numRuns: number, stats: Stats, label: string): Promise<void> {
  if (numRuns === 0) return;
  const parameters = { numRuns, seed: FUZZ_SEED, endOnFailure: false };
  const details = target.async
    ? await fc.check(fc.asyncProperty(arbitrary, async (input) => runCase(target, input, stats)), parameters)
    : fc.check(fc.property(arbitrary, (input) => runCase(target, input, stats) as void), parameters);
  if (!details.failed) return;
  const [input] = details.counterexample ?? [];
  const error = details.errorInstance;
  const file = input ? saveFailure(target.name, input.bytes, `${label}-seed${details.seed}`) : '(no counterexample)';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  throw new FuzzFailure(
    [
      `${target.name} (${label} input) failed after ${details.numRuns} cases, ${details.numShrinks} shrinks.`,
      `Reproduce: FUZZ_SEED=${details.seed} (path ${details.counterexamplePath}).`,
      `Input: ${input ? fc.stringify(input) : '?'}`,
      `Saved to ${file} — move it to test/node/fuzz/regressions/${target.name}-<what>.bin once understood.`,
      `Error: ${error instanceof Error ? error.message : String(error)}`,
      `Stack of the original error:\n${cause instanceof Error ? cause.stack : String(cause)}`,
    ].join('\n'),
  );
}
