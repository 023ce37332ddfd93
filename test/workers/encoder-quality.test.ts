import { describe, expect, it } from 'vitest';
import { processImage } from '../../src/image/pipeline';
import { ssim } from '../support/ssim';
import { corpus } from './helpers';
import { referenceDecode } from './images';

/*
 * Speed must never be bought with quality silently: each encoder, at the API's default quality,
 * keeps at least the luma SSIM (against the source, as `npm run bench` measures it) it had when
 * its settings were chosen. Measured on the 1 MP benchmark photo (12 MP figures: docs/performance.md).
 */
// Measured 2026-11-22: JPEG 0.8657 (the same as progressive mozjpeg: baseline changes only the
// entropy coding), WebP 0.9607, AVIF 0.9899 (speed 7 at this size); the floors leave a little room.
const FLOOR = { jpeg: 0.86, webp: 0.955, avif: 0.985 } as const;
const LIMITS = { maxInputPixels: 40e6, maxOutputPixels: 40e6, memoryBudgetBytes: 100 * 2 ** 20 };

describe('encoder quality at the default quality 80', () => {
  for (const format of ['jpeg', 'webp', 'avif'] as const) {
    it(`${format}: SSIM at or above ${FLOOR[format]}`, async () => {
      const input = await corpus('photos/photo-1mp.jpg');
      const source = await referenceDecode(input);
      const result = await processImage(input, { steps: [], format, quality: 80 }, LIMITS);
      const output = await referenceDecode(result.bytes);
      const score = ssim({ ...source, channels: 4 }, { ...output, channels: 4 });
      expect(score).toBeGreaterThanOrEqual(FLOOR[format]);
    });
  }
});
