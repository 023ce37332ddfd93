import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import { expectAppError, largeInput } from '../support/image-testing';
import { readDimensions } from '../support/formats';

/*
 * AVIF at the sizes the Pro plan accepts, with the default configuration (100 MiB budget): a 24 MP
 * single-item AVIF (sharp's and libavif's default layout) as input (48 MP AVIF results, streamed
 * to R2, are in test/workers/plan-edge/). What
 * runs holds at most what the memory guard predicted and fits the budget; what cannot fit is
 * refused from the header, naming the largest size that would. Single frames too large to hold
 * whole are decoded into a window of rows. The inputs are made by sharp from
 * the corpus photos (test/support/large-inputs.ts).
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;

const TO_JPEG: Transform = { steps: [], format: 'jpeg', quality: 80 };

describe('large AVIF within the budget', () => {
  it.each([
    ['avif-24mp-420.avif', 'JPEG q80', TO_JPEG, 6000, 4000],
    // Whole, dav1d held 91.8 MiB (a 72 MB frame) and 101.5 MiB (69 MB): both were refused.
    ['avif-24mp.avif', 'JPEG q80', TO_JPEG, 6000, 4000],
    ['avif-48mp-420.avif', 'JPEG q80', TO_JPEG, 8000, 6000],
  ])('%s to %s holds at most its prediction, within 100 MiB', { timeout: 120_000 }, async (name, _label, operation, width, height) => {
    const result = await processImage(await largeInput(name), operation, DEFAULTS);
    expect(readDimensions(result.format, result.bytes)).toEqual({ width, height });
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(100 * MiB);
  });
});

describe('large AVIF that cannot fit, refused from the header', () => {
  async function refusal(name: string, operation: Transform, limits = DEFAULTS): Promise<{ message: string; largestMegapixels: number; ms: number }> {
    const input = await largeInput(name);
    const started = Date.now();
    const error = await processImage(input, operation, limits).then(
      () => null,
      (e: unknown) => e,
    );
    const ms = Date.now() - started;
    const { message } = expectAppError(() => {
      throw error;
    }, 'FILE_TOO_LARGE');
    return { message, largestMegapixels: Number(/at most ([\d.]+) megapixels/.exec(message)?.[1]), ms };
  }

  it("a 48 MP single-item AVIF to WebP: libwebp's whole picture (72 MB) beside dav1d's state (24 MiB)", async () => {
    const { message, largestMegapixels } = await refusal('avif-48mp-420.avif', { steps: [], format: 'webp', quality: 80 });
    expect(message).toMatch(/^A 8000x6000 WebP result \(48\.0 megapixels\) needs about \d+ MB of memory/);
    expect(largestMegapixels).toBeGreaterThan(24);
    expect(largestMegapixels).toBeLessThan(48);
  });

  it('a 48 MP AVIF with an alpha item under a 48 MiB budget (MEMORY_BUDGET_MB): no result fits beside its decode, so the input size is named', { timeout: 120_000 }, async () => {
    // With the default budget its windows leave room for results up to 12.5 MP (to AVIF).
    const limits = { ...DEFAULTS, memoryBudgetBytes: 48 * MiB };
    const { message, largestMegapixels } = await refusal('avif-48mp-alpha.avif', { steps: [], format: 'avif', quality: 80 }, limits);
    expect(message).toMatch(/^Processing this 8000x6000 AVIF image \(48\.0 megapixels\) this way needs about \d+ MB of memory, more than a Worker has for one image \(48 MB\)/);
    expect(message).toMatch(/AVIF images like it can be at most [\d.]+ megapixels for it\.$/);
    expect(largestMegapixels).toBeGreaterThan(4);
    expect(largestMegapixels).toBeLessThan(48);
  });

  it('a 48 MP AVIF with an alpha item to AVIF: its frames in windows leave room for a smaller result', { timeout: 120_000 }, async () => {
    const { message, largestMegapixels } = await refusal('avif-48mp-alpha.avif', { steps: [], format: 'avif', quality: 80 });
    expect(message).toMatch(/^A 8000x6000 AVIF result \(48\.0 megapixels\) needs about \d+ MB of memory/);
    expect(largestMegapixels).toBeGreaterThan(4);
    expect(largestMegapixels).toBeLessThan(48);
  });
});
