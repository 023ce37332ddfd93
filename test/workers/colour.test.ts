import { afterAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/image/formats/index';
import { decodeWith } from '../support/image-testing';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/formats/index';
import { isCmyk } from '../../src/image/types';
import { deltaE2000, deltaE2000Stats, type DeltaEStats } from '../support/delta-e';
import { fixture, fixtureList } from './helpers';
import { referenceDecode } from './images';

/**
 * The colour test images of test/fixtures (made by `npm run fixtures`: Display P3, Adobe RGB and
 * ProPhoto profiles, 16-bit, CMYK and YCCK) converted to PNG must look like the colour-managed
 * reference (sharp/lcms applying the embedded profile): mean CIEDE2000 at most 1, 95% of pixels
 * within 2.
 */
const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, memoryBudgetBytes: 100 * 2 ** 20 };
// A CMYK file without a profile has no colour-managed truth, only a convention: both sides read it
// with libvips' default CMYK profile, and the tables are interpolated differently (a 9^4 CLUT
// resampled to 17^4, black point compensation): measured mean 1.1, p95 3.9.
const TOLERANCE: Record<string, { mean: number; p95: number }> = { 'cmyk/cmyk-noprofile.jpg': { mean: 1.5, p95: 4.5 } };
const DEFAULT_TOLERANCE = { mean: 1, p95: 2 };
const measured: Array<{ file: string; managed: DeltaEStats; unmanaged: DeltaEStats | null }> = [];

async function colourFixtures(): Promise<string[]> {
  const files = [...(await fixtureList('colour')), ...(await fixtureList('cmyk'))];
  return files;
}

describe('images with colour profiles and CMYK', () => {
  it('convert to sRGB within 1-2 ΔE2000 of the colour-managed reference', { timeout: 120_000 }, async () => {
    const files = await colourFixtures();
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const file of files) {
      const input = await fixture(file);
      const result = await processImage(input, { steps: [], format: 'png', quality: 80 }, LIMITS);
      const [ours, reference] = await Promise.all([referenceDecode(result.bytes), referenceDecode(input)]);
      const managed = deltaE2000Stats(ours, reference);
      measured.push({ file, managed, unmanaged: await unmanagedDifference(input, reference) });
      const tolerance = TOLERANCE[file] ?? DEFAULT_TOLERANCE;
      expect.soft(managed.mean, `${file}: mean ΔE2000`).toBeLessThanOrEqual(tolerance.mean);
      expect.soft(managed.p95, `${file}: 95th percentile ΔE2000`).toBeLessThanOrEqual(tolerance.p95);
    }
  });

  it('would fail without colour management: the raw pixels of the profiled images are visibly off', () => {
    const profiled = measured.filter((m) => m.unmanaged && !m.file.includes('noprofile'));
    expect(profiled.length).toBeGreaterThan(0);
    for (const { file, unmanaged } of profiled) expect(unmanaged!.p95, `${file}: unmanaged 95th percentile ΔE2000`).toBeGreaterThan(4);
  });

  it('measures colour difference as published (Sharma, Wu and Dalal test pairs)', () => {
    expect(deltaE2000([50, 2.6772, -79.7751], [50, 0, -82.7485])).toBeCloseTo(2.0425, 4);
    expect(deltaE2000([50, 2.5, 0], [73, 25, -18])).toBeCloseTo(27.1492, 4);
    expect(deltaE2000([50, 2.49, -0.001], [50, -2.49, 0.0011])).toBeCloseTo(7.2195, 4);
  });
});

/** The decoder's own RGB output, with no profile applied (null for CMYK, which has no RGB to show). */
async function unmanagedDifference(input: Uint8Array, reference: Awaited<ReturnType<typeof referenceDecode>>): Promise<DeltaEStats | null> {
  const decoded = await decodeWith(detectFormat(input)!, input);
  return isCmyk(decoded) ? null : deltaE2000Stats(decoded, reference);
}

afterAll(() => {
  for (const { file, managed, unmanaged } of measured) {
    const without = unmanaged ? `; without colour management mean ${unmanaged.mean.toFixed(2)}, p95 ${unmanaged.p95.toFixed(2)}` : '';
    console.log(`${file}: ΔE2000 mean ${managed.mean.toFixed(2)}, p95 ${managed.p95.toFixed(2)}, max ${managed.max.toFixed(2)}${without}`);
  }
});
