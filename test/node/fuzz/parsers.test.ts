/// <reference types="node" />
/**
 * Fuzz suite for the container parsers (pure TypeScript, so it runs in Node, which is faster than
 * workerd): FUZZ_RUNS cases per parser (default 5000; 20% random bytes, 80% mutated seed files).
 * Allowed outcomes: a result meeting the target's invariants, or AppError UNSUPPORTED_FORMAT; no
 * other error, no input modified, no case over FUZZ_CASE_MS (1000 ms). See targets.ts (the table),
 * arbitraries.ts (inputs), harness.ts (outcomes, timing, hang watchdog, environment variables).
 *
 *   npx vitest run --config test/vitest.config.ts --project node test/node/fuzz
 *   FUZZ_RUNS=200000 FUZZ_SEED=42 npx vitest run --config test/vitest.config.ts --project node test/node/fuzz/parsers
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FuzzInput, mutatedSeed, randomInput } from './arbitraries';
import { CASE_LIMIT_MS, FUZZ_RUNS, FUZZ_SEED, fuzz, newStats, runCase, startWatchdog, stopWatchdog, type Stats } from './harness';
import { TARGETS } from './targets';

// src/image/stages/colour/index.ts imports its default CMYK profile as a wrangler Data module (an
// ArrayBuffer), which Node's vite cannot load: the same bytes, read from disk.
const RANDOM_SHARE = 0.2;
const randomRuns = Math.round(FUZZ_RUNS * RANDOM_SHARE);
const mutationRuns = FUZZ_RUNS - randomRuns;
const summary: { name: string; stats: Stats; seeds: number; acceptedSeeds: number }[] = [];

beforeAll(() => startWatchdog());

afterAll(async () => {
  await stopWatchdog();
  if (summary.length === 0) return;
  const rows = summary.map(({ name, stats, seeds, acceptedSeeds }) => ({
    parser: name,
    cases: stats.cases,
    'results %': ((100 * stats.results) / Math.max(1, stats.cases)).toFixed(1),
    'seeds accepted': `${acceptedSeeds}/${seeds}`,
    'slowest ms': stats.slowestMs.toFixed(1),
    'total ms': stats.totalMs.toFixed(0),
    'slowest input': stats.slowestOrigin.slice(0, 70),
  }));
  console.log(`fuzz: ${FUZZ_RUNS} cases per parser (${randomRuns} random + ${mutationRuns} mutated; fewer where a target sets runShare), seed ${FUZZ_SEED ?? 'random'}`);
  console.table(rows);
});

describe('fuzz: parsers return a sound result or AppError UNSUPPORTED_FORMAT, quickly', () => {
  for (const target of TARGETS) {
    it(target.name, async () => {
      const seeds = await target.seeds();
      const stats = newStats();
      // Sanity check of the seeds themselves (the unmutated files must pass too).
      let acceptedSeeds = 0;
      for (const seed of new Set(seeds)) { // a seed listed several times (to weight it) is checked once
        const before = stats.results;
        try {
          await runCase(target, new FuzzInput(seed.bytes, `${seed.name} (unmutated)`), stats);
        } catch (error) {
          const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
          throw new Error(`seed ${seed.name} (unmutated): ${error instanceof Error ? error.message : error}\n${cause instanceof Error ? cause.stack : ''}`);
        }
        if (stats.results > before) acceptedSeeds++;
      }
      // `runShare` (conversion targets, tens of ms a case) scales both kinds of input alike.
      const share = target.runShare ?? 1;
      await fuzz(target, randomInput(target.random), Math.round(randomRuns * share), stats, 'random');
      await fuzz(target, mutatedSeed(seeds), Math.round(mutationRuns * share), stats, 'mutated');
      summary.push({ name: target.name, stats, seeds: new Set(seeds).size, acceptedSeeds });
      expect(stats.slowestMs).toBeLessThanOrEqual(CASE_LIMIT_MS);
    }, 600_000);
  }
});
