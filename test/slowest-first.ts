/// <reference types="node" />
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds the longest test files take on a 2-core machine like CI's (a fresh clone has no vitest
 * cache of durations, and vitest then starts files largest first, so a long file could start
 * last and run alone while the other worker idles). Started first, they end near the others.
 */
const SECONDS: Record<string, number> = {
  'test/e2e/web.test.ts': 146,
  'test/node/admin.test.ts': 128,
  'test/workers/full-size.test.ts': 109,
  'test/workers/plan-edge/jpeg.test.ts': 70,
  'test/workers/quality-auto.test.ts': 66,
  'test/node/fuzz/parsers.test.ts': 70,
  'test/workers/plan-edge/png.test.ts': 70,
  'test/workers/plan-edge/webp.test.ts': 65,
  'test/node/readme-examples.test.ts': 55,
  'src/image/formats/avif/decode.test.ts': 53,
  'test/workers/corpus.test.ts': 41,
  'test/workers/memory-budget.test.ts': 37,
  'test/node/smart-crop-vs-sharp.test.ts': 31,
  'src/image/auto-run.test.ts': 20,
  'src/image/formats/avif/encode.test.ts': 29,
  'test/e2e/avif-grid.test.ts': 27,
};

const root = path.resolve(import.meta.dirname, '..');

/** Vitest's order, with the files known to be long first, longest first. */
export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (file: TestSpecification) => SECONDS[path.relative(root, file.moduleId)] ?? 0;
    return [...sorted].sort((a, b) => seconds(b) - seconds(a));
  }
}
