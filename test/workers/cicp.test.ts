import { afterAll, describe, expect, it } from 'vitest';
import { colourProfileOf } from '../support/formats';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/formats/index';
import type { RgbaImage } from '../../src/image/types';
import { HEIGHT, syntheticRgb, WIDTH } from '../fixtures/synthetic-picture';
import { deltaE2000Stats, type DeltaEStats } from '../support/delta-e';
import { fixture, fixtureList } from './helpers';
import { decodeImage } from './images';

/**
 * The CICP fixtures of test/fixtures/cicp (made by make-cicp-fixtures.ts: Display P3 and BT.2020
 * AVIFs with an `nclx` colr written by avifenc, a Display P3 PNG with a `cICP` chunk) converted to
 * PNG must show the sRGB synthetic picture they were made from: mean CIEDE2000 at most 1, 95% of
 * pixels within 2. Their raw decoded pixels must be visibly off, so the test cannot pass without
 * the conversion.
 */
const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, memoryBudgetBytes: 100 * 2 ** 20 };
const measured: Array<{ file: string; managed: DeltaEStats; unmanaged: DeltaEStats }> = [];

function original(): RgbaImage {
  const rgb = syntheticRgb();
  const data = new Uint8Array(WIDTH * HEIGHT * 4);
  for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) data.set([rgb[i], rgb[i + 1], rgb[i + 2], 255], j);
  return { data, width: WIDTH, height: HEIGHT };
}

describe('images whose colour is described by CICP (AVIF nclx, PNG cICP)', () => {
  it('convert to sRGB within 1-2 ΔE2000 of the picture they were made from, and are visibly off without conversion', { timeout: 120_000 }, async () => {
    const files = await fixtureList('cicp');
    expect(files).toEqual(['cicp/bt2020-nclx.avif', 'cicp/p3-cicp.png', 'cicp/p3-nclx.avif']);
    const truth = original();
    for (const file of files) {
      const input = await fixture(file);
      const format = detectFormat(input)!;
      expect((await colourProfileOf(format, input))?.kind, file).toBe('cicp');
      const result = await processImage(input, { steps: [], format: 'png', quality: 80 }, LIMITS);
      const managed = deltaE2000Stats(await decodeImage('png', result.bytes), truth);
      const unmanaged = deltaE2000Stats(await decodeImage(format, input), truth);
      measured.push({ file, managed, unmanaged });
      expect.soft(managed.mean, `${file}: mean ΔE2000`).toBeLessThanOrEqual(1);
      expect.soft(managed.p95, `${file}: 95th percentile ΔE2000`).toBeLessThanOrEqual(2);
      expect.soft(unmanaged.p95, `${file}: unmanaged 95th percentile ΔE2000`).toBeGreaterThan(4);
    }
  });

  it('keep their code points through remove-metadata (nclx and cICP are not metadata)', async () => {
    for (const file of await fixtureList('cicp')) {
      const input = await fixture(file);
      const format = detectFormat(input)!;
      const stripped = await processImage(input, { steps: [{ op: 'remove-metadata' }], quality: 80 }, LIMITS);
      expect(stripped.format, file).toBe(format);
      expect(await colourProfileOf(format, stripped.bytes), file).toEqual(await colourProfileOf(format, input));
    }
  });
});

afterAll(() => {
  for (const { file, managed, unmanaged } of measured) {
    console.log(
      `${file}: ΔE2000 mean ${managed.mean.toFixed(2)}, p95 ${managed.p95.toFixed(2)}, max ${managed.max.toFixed(2)}; ` +
        `without colour management mean ${unmanaged.mean.toFixed(2)}, p95 ${unmanaged.p95.toFixed(2)}`,
    );
  }
});
