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
  it('takes the factor a resize of the crop would, with the crop scaled where it lies on that grid', () => {
    const crop = { x: 600, y: 648, width: 4800, height: 2704 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 1600, height: 901 })).toEqual({ shrink: 2, region: { x: 300, y: 324, width: 2400, height: 1352 }, shown: null });
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 600, height: 338 })).toEqual({ shrink: 8, region: { x: 75, y: 81, width: 600, height: 338 }, shown: null });
  });

  it('decodes the scaled pixels a crop off the grid touches, and says where in them its edges fall', () => {
    const crop = { x: 601, y: 650, width: 4799, height: 2700 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 599, height: 337 })).toEqual({
      shrink: 8,
      region: { x: 75, y: 81, width: 600, height: 338 },
      shown: { x: 0.125, y: 0.25, width: 599.875, height: 337.5 },
    });
  });

  it('reaches the picture edge with a side the factor does not divide, as the scaled picture rounds it up', () => {
    const crop = { x: 5000, y: 3000, width: 1001, height: 1001 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, { width: 6001, height: 4001 }, crop, { width: 200, height: 200 })).toEqual({
      shrink: 4,
      region: { x: 1250, y: 750, width: 251, height: 251 },
      shown: null,
    });
  });

  it('decodes whole where the resize enlarges, or the format has no factors', () => {
    const crop = { x: 601, y: 600, width: 800, height: 800 };
    expect(shrinkCropOnLoad(JPEG_FACTORS, stored, crop, { width: 1600, height: 1600 })).toEqual({ shrink: 1, region: crop, shown: null });
    expect(shrinkCropOnLoad([1], stored, crop, { width: 100, height: 100 })).toEqual({ shrink: 1, region: crop, shown: null });
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

  it('shows exactly a crop off the grid: the same size, and the pixels of decoding it whole within 40 dB', async () => {
    const bytes = await corpus('photos/photo-12mp.jpg');
    const crop = { x: 1001, y: 503, width: 2399, height: 1799 };
    const result = await processImage(bytes, { steps: [{ op: 'crop', ...crop }, { op: 'resize', width: 800 }], format: 'png' }, LIMITS);
    const got = await decodeRgba('png', result.bytes);
    const whole = await FORMATS.jpeg.read(bytes).decode({ shrink: 1, region: crop });
    const expected = (await readBands(resizeRows(whole, 800, 600))).image;
    expect([got.width, got.height]).toEqual([800, 600]);
    let squares = 0;
    for (let i = 0; i < got.data.length; i++) if (i % 4 !== 3) squares += (got.data[i] - expected.data[i]) ** 2;
    const psnr = 10 * Math.log10((255 * 255) / (squares / (got.width * got.height * 3)));
    expect(psnr).toBeGreaterThan(40);
  });
});
