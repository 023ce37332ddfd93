/// <reference types="node" />
/**
 * Fuzz targets for src/image/jpeg-entropy: `planJpegBands`, which reads untrusted uploads (it must
 * never throw, and what it returns must be sound band JPEGs), and `stitchJpegBands` (meant for our
 * own encoder's outputs: any Error is a clean rejection, but no hang, no broken output). Listed in
 * the fuzz table (targets.ts), so parsers.test.ts and regressions.test.ts run them.
 *
 * Seeds: the JPEG seeds of seeds.ts (baseline 4:2:0, 4:2:2, 4:4:4 files, one with restart markers),
 * a greyscale fixture, and copies of them with other scan structures (restart markers, a DC table
 * without room for more codes) made by the test tools of src/image/jpeg-entropy.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readJpegDimensions, verifyJpegStructure } from '../../../src/image/header/jpeg';
import { planJpegBands, type JpegBandPlan } from '../../../src/image/jpeg-entropy/bands';
import { readJpegHeader } from '../../../src/image/jpeg-entropy/header';
import { scanLayout } from '../../../src/image/jpeg-entropy/scan';
import { stitchJpegBands } from '../../../src/image/jpeg-entropy/stitch';
import { withDeepDcTable, withRestartMarkers } from '../../../src/image/jpeg-entropy/test-rewrite-scan';
import { jpegSeeds, PROJECT_ROOT, type Seed } from './seeds';
import { invariant, type FuzzTarget } from './targets';

/** Band budgets, picked by input length: one iMCU row a band, a few rows, a quarter megapixel. */
const BUDGETS = [1, 20_000, 250_000];

const bandSeeds = (() => {
  let seeds: Seed[] | undefined;
  return () => {
    if (seeds) return seeds;
    const grey: Seed = { name: 'fixtures/cmyk/grey-noprofile.jpg', bytes: new Uint8Array(readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/cmyk/grey-noprofile.jpg'))) };
    const small = jpegSeeds().filter((seed) => seed.bytes.length < 40_000 && readJpegHeader(seed.bytes)?.restartInterval === 0);
    const rewritten = [grey, ...small.slice(0, 3)].flatMap((seed) => [
      { name: `${seed.name} + restart markers every 3 MCUs`, bytes: withRestartMarkers(seed.bytes, 3) },
      { name: `${seed.name} + restart markers every 100 MCUs`, bytes: withRestartMarkers(seed.bytes, 100) },
      { name: `${seed.name} with a 16-bit DC table`, bytes: withDeepDcTable(seed.bytes) },
    ]);
    seeds = [...jpegSeeds(), grey, ...rewritten];
    return seeds;
  };
})();

/** What the project's own JPEG header checks say, or the error they throw. */
function projectReading(bytes: Uint8Array): { width: number; height: number } | Error {
  try {
    verifyJpegStructure(bytes);
    return readJpegDimensions(bytes);
  } catch (error) {
    return error as Error;
  }
}

interface PlanResult {
  plan: JpegBandPlan;
  jpegs: Uint8Array[];
}

function checkPlan(result: PlanResult | null, input: Uint8Array): void {
  if (result === null) return;
  const { plan, jpegs } = result;
  const { width, height, bands } = plan;
  const reading = projectReading(input);
  invariant(!(reading instanceof Error), `planned a file the header checks refuse: ${reading instanceof Error ? reading.message : ''}`);
  invariant(reading.width === width && reading.height === height, `plan ${width}x${height}, header ${reading.width}x${reading.height}`);
  const imcuHeight = scanLayout(readJpegHeader(input)!)!.imcuHeight;
  let y = 0;
  let bytes = 0;
  bands.forEach((band, i) => {
    invariant(band.y === y && band.rows > 0 && band.y % imcuHeight === 0, `band ${i} at ${band.y} (${band.rows} rows), expected ${y}`);
    invariant(band.skipRows === 0 || band.skipRows === imcuHeight, `band ${i} skips ${band.skipRows} rows`);
    const jpeg = jpegs[i];
    bytes += jpeg.length;
    const own = projectReading(jpeg);
    invariant(!(own instanceof Error), `band ${i} fails the header checks: ${own instanceof Error ? own.message : ''}`);
    const needed = band.skipRows + band.rows;
    invariant(own.width === width && own.height >= needed && own.height <= needed + imcuHeight, `band ${i} is ${own.width}x${own.height} for ${needed} rows`);
    invariant(planJpegBands(jpeg, Infinity) !== null, `band ${i} is not a clean file itself`);
    y += band.rows;
  });
  invariant(y === height, `bands end at row ${y} of ${height}`);
  invariant(bytes <= 4 * input.length + 4096 * bands.length, `${bytes} band bytes from ${input.length}`);
}

function checkStitched(output: Uint8Array, input: Uint8Array): void {
  const before = projectReading(input);
  const after = projectReading(output);
  invariant(!(after instanceof Error), `the output fails the header checks: ${after instanceof Error ? after.message : ''}`);
  if (!(before instanceof Error)) invariant(after.width === before.width && after.height === before.height, 'the size changed');
  invariant(output.length <= 2 * input.length + 4096, `${output.length} bytes from ${input.length}`);
  // The tables are optimal for the symbols: stitching the output changes nothing.
  const again = stitchJpegBands([output]);
  invariant(again.length === output.length && again.every((v, i) => v === output[i]), 'stitching the output again changed it');
}

export const JPEG_ENTROPY_TARGETS: readonly FuzzTarget[] = [
  {
    name: 'planJpegBands',
    run: (bytes): PlanResult | null => {
      const plan = planJpegBands(bytes, BUDGETS[bytes.length % BUDGETS.length]);
      return plan && { plan, jpegs: plan.bands.map((band) => band.jpeg()) };
    },
    seeds: bandSeeds,
    random: ['jpeg'],
    neverThrows: true,
    // A case reads the scan and builds every band (tens of milliseconds for the larger seeds).
    runShare: 0.2,
    check: checkPlan,
  },
  {
    name: 'stitchJpegBands',
    run: (bytes) => stitchJpegBands([bytes]),
    seeds: bandSeeds,
    random: ['jpeg'],
    anyError: true, // it throws plain Errors for what it did not expect
    runShare: 0.1, // our own encoder's output, not uploads: fewer cases than the planner
    check: checkStitched,
  },
];
