import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hRowOpaque, vRowOpaque } from '../../../test/support/lanczos-opaque-reference';
import { bandsOf, collectFrame } from '../../../test/support/row-sources';
import { boxShrinkFactor, boxShrinkOpaque } from './box-shrink';
import { contributions, type Contributions } from './lanczos';
import { resize, resizeRows } from './resize';
import type { RgbaImage } from '../types';

/**
 * The opaque resize, pass by pass in TypeScript (lanczos.ts's arithmetic, as the pipeline ran it
 * before the WebAssembly kernels): box step, then the order with fewer multiply-adds; with
 * `columns`, only those output columns (which may change the order, and so the rounding between
 * the passes).
 */
function reference(image: RgbaImage, targetWidth: number, targetHeight: number, columns = { x: 0, width: targetWidth }): Uint8Array {
  const fx = boxShrinkFactor(image.width, targetWidth);
  const fy = boxShrinkFactor(image.height, targetHeight);
  let words: Int32Array = new Int32Array(image.data.slice().buffer);
  let { width, height } = image;
  if (fx > 1 || fy > 1) ({ words, width, height } = boxShrinkOpaque(words, width, height, fx, fy));
  const all = width !== targetWidth ? contributions(width, targetWidth, image.width / fx / targetWidth) : null;
  const ch = all && slice(all, columns);
  const cv = height !== targetHeight ? contributions(height, targetHeight, image.height / fy / targetHeight) : null;
  const outWidth = columns.width;
  const out = new Int32Array(outWidth * targetHeight);
  if (ch && cv && height * ch.taps + outWidth * cv.taps <= width * cv.taps + targetHeight * ch.taps) {
    const rows = new Int32Array(outWidth * height);
    for (let y = 0; y < height; y++) hRowOpaque(words, y * width, rows, y * outWidth, outWidth, ch);
    for (let y = 0; y < targetHeight; y++) vRowOpaque(rows, outWidth, cv.start[y] * outWidth, out, y * outWidth, y, cv);
  } else {
    const rows = cv ? new Int32Array(width * targetHeight) : words;
    if (cv) for (let y = 0; y < targetHeight; y++) vRowOpaque(words, width, cv.start[y] * width, rows, y * width, y, cv);
    if (ch) for (let y = 0; y < targetHeight; y++) hRowOpaque(rows, y * width, out, y * outWidth, outWidth, ch);
    else out.set(rows);
  }
  return new Uint8Array(out.buffer);
}

function slice(c: Contributions, { x, width }: { x: number; width: number }): Contributions {
  const count = c.count.subarray(x, x + width);
  return { ...c, start: c.start.subarray(x, x + width), count, weights: c.weights.subarray(x * c.stride), taps: count.reduce((a, b) => a + b, 0) };
}

/** Opaque noise: every byte value, so clamping and rounding are exercised at every tap. */
function noise(width: number, height: number, seed: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = (i & 3) === 3 ? 255 : s & 255;
  }
  return { data, width, height };
}

describe('Lanczos kernels in WebAssembly (opaque rows)', () => {
  it('resize the same as the TypeScript passes, byte for byte: shrinking, enlarging, box steps, both pass orders', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer(),
        (width, height, targetWidth, targetHeight, seed) => {
          fc.pre(width !== targetWidth || height !== targetHeight);
          const image = noise(width, height, seed);
          expect(Buffer.from(resize(image, targetWidth, targetHeight).data).equals(Buffer.from(reference(image, targetWidth, targetHeight)))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it.each([
    [1600, 1200, 600, 400],
    [1600, 1200, 1000, 1100],
    [999, 777, 101, 1203],
    [4000, 30, 333, 7],
  ])('streamed in bands, %ix%i -> %ix%i, with and without a cut of columns, as the TypeScript passes did', async (width, height, targetWidth, targetHeight) => {
    const image = noise(width, height, width * 31 + height);
    const expected = reference(image, targetWidth, targetHeight);
    const whole = await collectFrame(resizeRows(bandsOf(image, [7, 16, 1, 64], false), targetWidth, targetHeight));
    expect(Buffer.from(whole.data).equals(Buffer.from(expected))).toBe(true);

    const columns = { x: Math.floor(targetWidth / 3), width: Math.max(1, Math.floor(targetWidth / 2)) };
    const cut = await collectFrame(resizeRows(bandsOf(image, [16], false), targetWidth, targetHeight, columns));
    expect(cut.width).toBe(columns.width);
    expect(Buffer.from(cut.data).equals(Buffer.from(reference(image, targetWidth, targetHeight, columns)))).toBe(true);
  });
});
