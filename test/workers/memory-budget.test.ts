import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import { takeCodecMemoryBytes } from '../../src/image/codecs/wasm-memory';
import { crop } from '../../src/image/crop';
import { applyOrientation } from '../../src/image/orient';
import { processImage } from '../../src/image/pipeline';
import { readDimensions } from '../../src/image/formats';
import type { Operation } from '../../src/image/operations';
import type { ImageFormat } from '../../src/image/types';
import { corpus, decodeJpeg, decodePng, expectAppError, sameBytes } from '../support/image-testing';

const MB = 2 ** 20;
/** The shipped defaults: 14 MP, 100 MB per pipeline run. */
const LIMITS = readSettings({}).pixelLimits.pro;
const UNLIMITED = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 8192 * MB };

const op = (operation: Partial<Operation> & Pick<Operation, 'kind'>) => ({ quality: 80, keepAspectRatio: true, ...operation }) as Operation;

/** The file with its EXIF Orientation (a SHORT in either byte order) set to `value`. */
function withOrientation(jpeg: Uint8Array, value: number): Uint8Array {
  const copy = jpeg.slice();
  for (let i = 0; i + 10 < copy.length && i < 65_536; i++) {
    if (copy[i] === 0x01 && copy[i + 1] === 0x12 && copy[i + 2] === 0 && copy[i + 3] === 3) {
      copy[i + 9] = value; // big-endian: tag, type 3, count 1, value in the first two bytes
      return copy;
    }
    if (copy[i] === 0x12 && copy[i + 1] === 0x01 && copy[i + 2] === 3 && copy[i + 3] === 0) {
      copy[i + 8] = value;
      return copy;
    }
  }
  throw new Error('no Orientation tag');
}

describe('memory budget: a 12 MP photo in a 128 MB isolate', () => {
  it.each([
    ['W1 resize to 1000 px, WebP', op({ kind: 'resize', width: 1000, format: 'webp' })],
    ['W4 crop 2000x2000, JPEG', op({ kind: 'crop', region: { x: 1000, y: 500, width: 2000, height: 2000 } })],
  ])('%s fits the default 100 MB budget, measured and predicted', async (_name, operation) => {
    const result = await processImage(await corpus('photos/photo-12mp.jpg'), operation, LIMITS);
    expect(result.peakBytes).toBeGreaterThan(16 * MB);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(LIMITS.memoryBudgetBytes);
  }, 60_000);

  it('W2 JPEG at full size fits the budget; encoded in bands, it decodes to the whole picture at the size of a whole-image encode', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const result = await processImage(input, op({ kind: 'convert', format: 'jpeg' }), LIMITS);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(LIMITS.memoryBudgetBytes);
    expect(readDimensions('jpeg', result.bytes)).toEqual({ width: 4000, height: 3000 });
    const decoded = await decodeJpeg(result.bytes);
    expect([decoded.width, decoded.height]).toEqual([4000, 3000]);
    // jSquash's whole-image encode of this photo at q80 is 1,418,185 bytes.
    expect(Math.abs(result.bytes.byteLength - 1_418_185) / 1_418_185).toBeLessThan(0.01);
  }, 60_000);

  it('refuses, before decoding, a 12 MP AVIF result with the largest that fits', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    takeCodecMemoryBytes();
    const error = await processImage(input, op({ kind: 'convert', format: 'avif' }), LIMITS).then(
      () => null,
      (e: unknown) => e,
    );
    // No codec ran: nothing was decoded.
    expect(takeCodecMemoryBytes()).toBe(0);
    const appError = expectAppError(() => { throw error; }, 'FILE_TOO_LARGE');
    expect(appError.message).toMatch(/^A 4000x3000 AVIF result \(12\.0 megapixels\) needs about \d+ MB of memory, more than a Worker has for one image \(100 MB\); AVIF results can be at most 2\.\d megapixels\./);
  });

  it('a resize to a size that fits makes the same request succeed', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const result = await processImage(input, op({ kind: 'resize', width: 1000, format: 'avif' }), LIMITS);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(result.plannedPeakBytes).toBeLessThanOrEqual(LIMITS.memoryBudgetBytes);
  }, 60_000);
});

describe('memory plan: the guard never predicts less than the pipeline holds', () => {
  // Every decoder (each input format to JPEG) and every encoder (JPEG to each format), at 1 MP.
  const cases: [string, ImageFormat, ImageFormat][] = [
    ...(['png', 'webp', 'avif'] as const).map((from): [string, ImageFormat, ImageFormat] => [`${from} -> jpeg`, from, 'jpeg']),
    ...(['jpeg', 'png', 'webp', 'avif'] as const).map((to): [string, ImageFormat, ImageFormat] => [`jpeg -> ${to}`, 'jpeg', to]),
  ];

  it.each(cases)('%s at 1 MP', async (_name, from, to) => {
    const photo = await corpus('photos/photo-1mp.jpg');
    const input = from === 'jpeg' ? photo : (await processImage(photo, op({ kind: 'convert', format: from }), UNLIMITED)).bytes;
    const result = await processImage(input, op({ kind: 'convert', format: to }), UNLIMITED);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
  }, 60_000);
});

describe('banded decoding of a rotated photo', () => {
  it.each([3, 6, 8])('orientation %i and a crop give exactly what a whole decode, rotation and crop give', async (orientation) => {
    const input = withOrientation(await corpus('photos/photo-12mp.jpg'), orientation);
    const region = { x: 301, y: 1203, width: 517, height: 389 };
    const result = await processImage(input, op({ kind: 'crop', region, format: 'png' }), LIMITS);
    const expected = crop(applyOrientation(await decodeJpeg(input), orientation), region);
    const actual = await decodePng(result.bytes);
    expect([actual.width, actual.height]).toEqual([region.width, region.height]);
    expect(sameBytes(actual.data, expected.data)).toBe(true);
    // Only the crop's frame was allocated, not the 48 MB photo.
    expect(result.peakBytes).toBeLessThan(48 * MB);
  }, 60_000);
});
