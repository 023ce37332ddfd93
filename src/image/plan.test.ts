import { describe, expect, it } from 'vitest';
import { corpus, decodeRgba } from '../../test/support/image-testing';
import { readBands } from '../../test/support/row-sources';
import { FORMATS } from './formats/index';
import { processImage } from './pipeline';
import { shrinkCropOnLoad } from './plan';
import { resizeRows } from './stages/resize';

const JPEG_FACTORS = [1, 2, 4, 8];
const LIMITS = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };
const stored = { width: 6000, height: 4000 };

describe('shrinkCropOnLoad', () => {
  it('takes the largest factor that leaves the resize its size and on whose grid the crop lies, with the crop scaled', () => {
    const crop = { x: 600, y: 648, width: 4800, height: 2704 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 1600, height: 901 })).toEqual({ shrink: 2, region: { x: 300, y: 324, width: 2400, height: 1352 } });
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 600, height: 338 })).toEqual({ shrink: 8, region: { x: 75, y: 81, width: 600, height: 338 } });
    // y = 650 is on the grid of 2 only.
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, { ...crop, y: 650 }, { width: 600, height: 338 }).shrink).toBe(2);
  });

  it('reaches the picture edge with a side the factor does not divide, as the scaled picture rounds it up', () => {
    const crop = { x: 5000, y: 3000, width: 1000, height: 1000 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, { width: 6001, height: 4001 }, { ...crop, width: 1001, height: 1001 }, { width: 200, height: 200 })).toEqual({
      shrink: 4,
      region: { x: 1250, y: 750, width: 251, height: 251 },
    });
  });

  it('decodes whole where the crop is off every grid, or the resize enlarges, or the format has no factors', () => {
    const odd = { x: 601, y: 650, width: 4800, height: 2700 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, odd, { width: 1600, height: 900 })).toEqual({ shrink: 1, region: odd });
    const crop = { x: 600, y: 600, width: 800, height: 800 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 1600, height: 1600 })).toEqual({ shrink: 1, region: crop });
    expect(shrinkCropOnLoad([1], stored, crop, { width: 100, height: 100 })).toEqual({ shrink: 1, region: crop });
  });
});

describe('a crop then a resize of a JPEG', () => {
  it('decodes only the crop, at the shrink: the resize of the same pixels of the scaled decode', async () => {
    const bytes = await corpus('photos/photo-12mp.jpg');
    const steps = [
      { op: 'crop' as const, x: 1000, y: 500, width: 2400, height: 1800 },
      { op: 'resize' as const, width: 800 },
    ];
    const result = await processImage(bytes, { steps, format: 'png' }, LIMITS);
    const got = await decodeRgba('png', result.bytes);
    const scaled = await FORMATS.jpeg.read(bytes).decode({ shrink: 2, region: { x: 500, y: 250, width: 1200, height: 900 } });
    const expected = (await readBands(resizeRows(scaled, 800, 600))).image;
    expect([got.width, got.height]).toEqual([800, 600]);
    expect(Buffer.from(got.data).equals(Buffer.from(expected.data))).toBe(true);
  });
});
