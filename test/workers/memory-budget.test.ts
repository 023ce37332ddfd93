import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';

import { applyOrientation } from '../../src/image/stages/orient';
import { processImage } from '../../src/image/pipeline';
import type { Transform } from '../../src/image/operations';
import type { ImageFormat } from '../../src/image/types';
import { withOrientation } from '../support/exif-orientation';
import { corpus, decodeJpeg, decodePng, expectAppError, largeInput, referenceJpegEncode, sameBytes } from '../support/image-testing';
import { encodeJpeg } from '../../src/image/formats/jpeg/encode';
import { noiseRows } from '../support/stored-png';
import { crop, frameSource } from '../support/row-sources';

/*
 * The memory guard against measurement: the bytes a run holds (input, stage buffers and codec
 * memories, memory-meter.ts) never exceed what the guard predicted from the header
 * (memory-plan.ts), and what it admits fits the budget a deployed isolate has. The full-size
 * photos are in full-size.test.ts; this file covers every decoder and encoder pairing and the
 * streaming stages themselves.
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;
const UNLIMITED = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 8192 * MiB };

/** A run of `steps` (a resize keeps the aspect ratio) into `format` at q80 unless given. */
const op = ({ steps = [], ...output }: Partial<Omit<Transform, 'steps'>> & { steps?: Transform['steps'] }): Transform => ({
  quality: 80,
  ...output,
  steps,
});

const FORMATS: ImageFormat[] = ['jpeg', 'png', 'webp', 'avif'];

describe('the guard never predicts less than a run holds', () => {
  // Every decoder with every encoder, on the 1 MP photo converted to each input format.
  const pairs = FORMATS.flatMap((from) => FORMATS.map((to) => [from, to] as const));

  it.each(pairs)('%s -> %s at 1 MP', async (from, to) => {
    const photo = await corpus('photos/photo-1mp.jpg');
    const input = from === 'jpeg' ? photo : (await processImage(photo, op({ steps: [], format: from }), UNLIMITED)).bytes;
    const result = await processImage(input, op({ steps: [], format: to }), DEFAULTS);
    expect(result.peakBytes).toBeGreaterThan(input.byteLength);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
  });

  it.each([
    ['12 MP -> 1000 px WebP (1/4 scale on load)', 8, op({ steps: [{ op: 'resize', width: 1000 }], format: 'webp' })],
    ['12 MP crop 2000x2000 -> JPEG', 24, op({ steps: [{ op: 'crop', x: 1000, y: 500, width: 2000, height: 2000 }] })],
    ['12 MP -> JPEG q80', 64, op({ steps: [], format: 'jpeg' })],
  ] as const)('%s holds at most %i MiB', async (_name, maxMiB, operation) => {
    const result = await processImage(await corpus('photos/photo-12mp.jpg'), operation, DEFAULTS);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.peakBytes).toBeLessThanOrEqual(maxMiB * MiB);
  });

  // The oriented frame splits the run: the encoder opens only once the frame is complete and the
  // decoder gone, as the plan counts (a small result's encoder was once opened beside the decoder).
  it.each([
    [300, 'jpeg'],
    [500, 'png'],
    [700, 'jpeg'],
  ] as const)('an EXIF-rotated 12 MP photo resized to %i px %s', async (width, format) => {
    const rotated = withOrientation(await corpus('photos/photo-12mp.jpg'), 6);
    const result = await processImage(rotated, op({ steps: [{ op: 'resize', width }], format }), DEFAULTS);
    expect(result.width).toBe(width);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
  });
});

describe('streaming stages', () => {
  it.each([3, 6, 8])('orientation %i and a crop give exactly what a whole decode, rotation and crop give, decoding only the crop', async (orientation) => {
    const input = withOrientation(await corpus('photos/photo-12mp.jpg'), orientation);
    const region = { x: 301, y: 1203, width: 517, height: 389 };
    const result = await processImage(input, op({ steps: [{ op: 'crop', ...region }], format: 'png' }), DEFAULTS);
    const expected = crop(applyOrientation(await decodeJpeg(input), orientation), region);
    const actual = await decodePng(result.bytes);
    expect([actual.width, actual.height]).toEqual([region.width, region.height]);
    expect(sameBytes(actual.data, expected.data)).toBe(true);
    // A crop window of the stored image is decoded: nothing near the 48 MB photo is allocated.
    expect(result.peakBytes).toBeLessThan(16 * MiB);
  });

});

describe('JPEG results of EXIF-rotated photos: the encoder places the rows (codecs/jpeg/encoder.c, placed mode)', () => {
  // The result is held as YCbCr planes (1.5 bytes a pixel) instead of an RGB frame (3), beside the
  // decoder: 18 MB at 12 MP, so libjpeg's 36 MB of coefficients for the optimised tables fit too.
  it('a 12 MP portrait photo (Orientation 6) to JPEG is sharp\'s file of the rotated photo, within 64 MiB', async () => {
    const input = await largeInput('jpeg-12mp-rotated.jpg');
    const result = await processImage(input, op({ steps: [], format: 'jpeg' }), DEFAULTS);
    expect([result.width, result.height]).toEqual([3000, 4000]);
    const rotated = applyOrientation(await decodeJpeg(input), 6);
    expect(sameBytes(result.bytes, await referenceJpegEncode(rotated, 80))).toBe(true);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(64 * MiB);
  }, 60_000);
});

describe('PNG and AVIF results of EXIF-rotated JPEGs, a strip at a time (plan.ts withOrientStrips)', () => {
  // An RGB frame of the turned 12 MP photo is 36 MB; beside the PNG's bound (the whole file, in
  // memory here) it passes the 64 MiB line, and beside a progressive file's coefficients the budget.
  it.each([
    [8, 'jpeg-12mp.jpg'],
    [3, 'jpeg-12mp.jpg'],
    [6, 'jpeg-12mp-progressive.jpg'],
  ])('orientation %i to PNG (%s): the pixels of the turned photo exactly, within the plan', async (orientation, file) => {
    const input = withOrientation(await largeInput(file), orientation);
    const result = await processImage(input, op({ steps: [], format: 'png' }), DEFAULTS);
    const expected = applyOrientation(await decodeJpeg(input), orientation);
    const actual = await decodePng(result.bytes);
    expect([actual.width, actual.height]).toEqual([expected.width, expected.height]);
    expect(sameBytes(actual.data, expected.data)).toBe(true);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(file === 'jpeg-12mp.jpg' ? 64 * MiB : DEFAULTS.memoryBudgetBytes);
  }, 60_000);
});

describe('a WebP result capped to what the budget leaves (plan.ts fitResultToBudget)', () => {
  it('is the same file an uncapped run makes, from a run that holds at most the smaller budget', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const operation = op({ steps: [], format: 'webp' });
    // Both runs take libwebp's low_memory mode (the token buffer would not fit); 48 MiB leaves room for the whole bound.
    const uncapped = await processImage(input, operation, { ...DEFAULTS, memoryBudgetBytes: 48 * MiB });
    const tight = { ...DEFAULTS, memoryBudgetBytes: uncapped.plannedPeakBytes - 8 * MiB };
    const capped = await processImage(input, operation, tight);
    expect(capped.plannedPeakBytes).toBeLessThanOrEqual(tight.memoryBudgetBytes);
    expect(capped.peakBytes).toBeLessThanOrEqual(capped.plannedPeakBytes);
    expect(sameBytes(capped.bytes, uncapped.bytes)).toBe(true);
  });
});

/** The FILE_TOO_LARGE refusal of a full-size conversion of `input` to WebP, and the 4:3 width of the largest size it names. */
async function webpRefusal(input: Uint8Array, limits: typeof DEFAULTS): Promise<{ message: string; largest: number; width: number }> {
  const error = await processImage(input, op({ steps: [], format: 'webp' }), limits).then(
    () => null,
    (e: unknown) => e,
  );
  const { message } = expectAppError(() => {
    throw error;
  }, 'FILE_TOO_LARGE');
  const largest = Number(/WebP results can be at most ([\d.]+) megapixels/.exec(message)![1]) * 1e6;
  return { message, largest, width: Math.floor(Math.sqrt((largest * 4) / 3)) };
}

describe('refusals from the header', () => {
  it('names the largest size that fits when even the low-memory modes cannot fit the budget', async () => {
    const small = { ...DEFAULTS, memoryBudgetBytes: 20 * MiB };
    const input = await corpus('photos/photo-12mp.jpg');
    const { message, width } = await webpRefusal(input, small);
    expect(message).toMatch(/^A 4000x3000 WebP result \(12\.0 megapixels\) needs about \d+ MB of memory, more than a Worker has for one image \(20 MB\); WebP results can be at most \d+(\.\d)? megapixels from this image\./);
    // The size it names does fit.
    const result = await processImage(input, op({ steps: [{ op: 'resize', width }], format: 'webp' }), small);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(small.memoryBudgetBytes);
  });

  it('counts every step of a chain, and names a result size at which the same steps fit', async () => {
    const small = { ...DEFAULTS, memoryBudgetBytes: 16 * MiB };
    const input = await corpus('photos/photo-12mp.jpg');
    const crop = { op: 'crop', x: 200, y: 150, width: 3600, height: 2700 } as const;
    const rest = [{ op: 'blur', sigma: 3 }, { op: 'rotate', angle: 90 }] as const;
    const error = await processImage(input, op({ steps: [crop, ...rest], format: 'webp' }), small).then(() => null, (e: unknown) => e);
    const { message } = expectAppError(() => {
      throw error;
    }, 'FILE_TOO_LARGE');
    expect(message).toMatch(/^A 2700x3600 WebP result \(9\.7 megapixels\) needs about \d+ MB/);
    const largest = Number(/WebP results can be at most ([\d.]+) megapixels/.exec(message)![1]) * 1e6;
    // The steps with a resize to that size after the crop (before the blur, as the plan scales them) fit.
    const width = Math.floor(Math.sqrt((largest * 4) / 3));
    const result = await processImage(input, op({ steps: [crop, { op: 'resize', width }, ...rest], format: 'webp' }), small);
    expect(result.width * result.height).toBeLessThanOrEqual(largest);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(small.memoryBudgetBytes);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
  });
});

describe('refusals of a 48 MP progressive JPEG at full size', () => {
  // Its packed coefficients are allowed what the budget leaves, down to half their worst case: the
  // size named was "0 megapixels" (the search kept the full-size plan's allowance), and sizes near
  // the edge fit or not by a few macroblocks of the encoder.
  it('names a WebP size that fits', async () => {
    const input = await largeInput('jpeg-48mp-progressive.jpg');
    const { largest, width } = await webpRefusal(input, DEFAULTS);
    expect(largest).toBeGreaterThan(4e6);
    const result = await processImage(input, op({ steps: [{ op: 'resize', width }], format: 'webp' }), DEFAULTS);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(DEFAULTS.memoryBudgetBytes);
  }, 120_000);
});

describe('JPEG results with optimised tables packed (plan.ts withPackedEncode)', () => {
  // A 12 MP q95 result held in memory is bounded at 36 MB, beside libjpeg's 36 MB of coefficients:
  // over the 64 MiB line unpacked, within it packed.
  it('a 12 MP photo to JPEG q95 is sharp\'s file (optimised tables) within 64 MiB', async () => {
    const photo = await corpus('photos/photo-12mp.jpg');
    const result = await processImage(photo, op({ steps: [], format: 'jpeg', quality: 95 }), DEFAULTS);
    expect(sameBytes(result.bytes, await referenceJpegEncode(await decodeJpeg(photo), 95))).toBe(true);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(64 * MiB);
  }, 60_000);

  it('a noise picture that outgrows the allowance is encoded again with the standard tables, within the same plan', async () => {
    const width = 4000;
    const height = 3000;
    const rows = noiseRows(7);
    const data = new Uint8Array(width * height * 4).fill(255);
    const rgb = new Uint8Array(width * 3);
    for (let y = 0; y < height; y++) {
      rows(y, rgb);
      for (let x = 0; x < width; x++) data.set(rgb.subarray(3 * x, 3 * x + 3), 4 * (y * width + x));
    }
    const noise = { data, width, height };
    const input = await encodeJpeg(frameSource(noise, { alpha: false }), { quality: 90, optimizeHuffman: false });
    const decoded = await decodeJpeg(input);
    const standard = await encodeJpeg(frameSource(decoded, { alpha: false }), { quality: 95, optimizeHuffman: false });
    const result = await processImage(input, op({ steps: [], format: 'jpeg', quality: 95 }), DEFAULTS);
    expect(sameBytes(result.bytes, standard)).toBe(true);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(64 * MiB);
  }, 120_000);
});
