import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  hRowOpaque, hRowPremultiply, hRowUnpremultiply, unpremultiplyRow, vRowOpaque, vRowPremultiply, vRowUnpremultiply,
} from '../../../test/support/lanczos-reference';
import { xorshift } from '../../../test/support/image-testing';
import { bandsOf, collectFrame } from '../../../test/support/row-sources';
import { boxShrinkFactor, boxShrinkOpaque } from './box-shrink';
import { contributions, type Contributions } from './lanczos';
import { horizontalFirst, resize, resizeRows } from './resize';
import type { RgbaImage } from '../types';

/**
 * The resize, pass by pass in TypeScript (lanczos.ts's arithmetic, as the pipeline ran it before
 * the WebAssembly kernels): for opaque pictures the box step, then the order with fewer
 * multiply-adds; with `columns`, only those output columns (which may change the order, and so the
 * rounding between the passes).
 */
function reference(image: RgbaImage, targetWidth: number, targetHeight: number, columns = { x: 0, width: targetWidth }, opaque = true): Uint8Array {
  const fx = opaque ? boxShrinkFactor(image.width, targetWidth) : 1;
  const fy = opaque ? boxShrinkFactor(image.height, targetHeight) : 1;
  let words: Int32Array = new Int32Array(image.data.slice().buffer);
  let { width, height } = image;
  if (fx > 1 || fy > 1) ({ words, width, height } = boxShrinkOpaque(words, width, height, fx, fy));
  const all = width !== targetWidth ? contributions(width, targetWidth, image.width / fx / targetWidth) : null;
  const ch = all && slice(all, columns);
  const cv = height !== targetHeight ? contributions(height, targetHeight, image.height / fy / targetHeight) : null;
  const outWidth = columns.width;
  // The order is the resize's choice (what this checks is the arithmetic of each).
  const hFirst = ch && cv && horizontalFirst({ width, height }, { width: outWidth, height: targetHeight }, ch.taps, cv.taps, opaque);
  if (!opaque) return premultipliedReference(words, width, height, outWidth, targetHeight, ch, cv, !!hFirst);
  const out = new Int32Array(outWidth * targetHeight);
  if (hFirst) {
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

function premultipliedReference(
  words: Int32Array, width: number, height: number, outWidth: number, outHeight: number,
  ch: Contributions | null, cv: Contributions | null, hFirst: boolean,
): Uint8Array {
  const out = new Uint8ClampedArray(outWidth * outHeight * 4);
  if (hFirst) {
    const rows = new Uint16Array(outWidth * 4 * height);
    for (let y = 0; y < height; y++) hRowPremultiply(words, y * width, rows, y * outWidth * 4, outWidth, ch!);
    for (let y = 0; y < outHeight; y++) vRowUnpremultiply(rows, outWidth * 4, cv!.start[y] * outWidth * 4, out, y * outWidth * 4, y, cv!);
    return new Uint8Array(out.buffer);
  }
  const tmp = new Uint16Array(4 * Math.max(width, outWidth));
  for (let y = 0; y < outHeight; y++) {
    if (cv) vRowPremultiply(words, width, cv.start[y] * width, tmp, 0, y, cv);
    else hRowPremultiply(words, y * width, tmp, 0, outWidth, ch!);
    if (ch && cv) hRowUnpremultiply(tmp, 0, out, y * outWidth * 4, outWidth, ch);
    else unpremultiplyRow(tmp, 0, out, y * outWidth * 4, outWidth * 4);
  }
  return new Uint8Array(out.buffer);
}

function slice(c: Contributions, { x, width }: { x: number; width: number }): Contributions {
  const count = c.count.subarray(x, x + width);
  return { ...c, start: c.start.subarray(x, x + width), count, weights: c.weights.subarray(x * c.stride), taps: count.reduce((a, b) => a + b, 0) };
}

/** Noise in every byte value, so that clamping and rounding are exercised at every tap; opaque, or with alpha of every value (0 and 255 often). */
function noise(width: number, height: number, seed: number, opaque = true): RgbaImage {
  const next = xorshift(seed);
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i++) {
    const s = next();
    const alpha = (s >>> 8) % 4 === 0 ? 0 : (s >>> 8) % 4 === 1 ? 255 : s & 255;
    data[i] = (i & 3) !== 3 ? s & 255 : opaque ? 255 : alpha;
  }
  return { data, width, height };
}

describe('Lanczos kernels in WebAssembly', () => {
  it.each([true, false])('resize the same as the TypeScript passes, byte for byte (opaque: %s): shrinking, enlarging, box steps, both pass orders', (opaque) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer({ min: 1, max: 260 }),
        fc.integer(),
        (width, height, targetWidth, targetHeight, seed) => {
          fc.pre(width !== targetWidth || height !== targetHeight);
          const image = noise(width, height, seed, opaque);
          // A small picture can come out opaque by chance: resize() then takes the opaque path.
          const allOpaque = image.data.every((value, i) => (i & 3) !== 3 || value === 255);
          const expected = reference(image, targetWidth, targetHeight, undefined, opaque || allOpaque);
          expect(Buffer.from(resize(image, targetWidth, targetHeight).data).equals(Buffer.from(expected))).toBe(true);
        },
      ),
      { numRuns: 120 },
    );
  });

  it.each([
    [1600, 1200, 600, 400, true],
    [1600, 1200, 1000, 1100, true],
    [999, 777, 101, 1203, true],
    [4000, 30, 333, 7, true],
    [1600, 1200, 600, 400, false],
    [999, 777, 101, 1203, false],
    [301, 4000, 1200, 77, false],
    // One axis only: the horizontal pass alone, the vertical pass alone.
    [803, 601, 333, 601, true],
    [803, 601, 803, 211, true],
    [803, 601, 333, 601, false],
    [803, 601, 803, 1211, false],
  ])('streamed in bands, %ix%i -> %ix%i (opaque: %s), with and without a cut of columns, as the TypeScript passes did', async (width, height, targetWidth, targetHeight, opaque) => {
    const image = noise(width, height, width * 31 + height, opaque);
    const expected = reference(image, targetWidth, targetHeight, undefined, opaque);
    const whole = await collectFrame(resizeRows(bandsOf(image, [7, 16, 1, 64], !opaque), targetWidth, targetHeight));
    expect(Buffer.from(whole.data).equals(Buffer.from(expected))).toBe(true);

    // Columns are cut by the resize only where the width changes (otherwise by the caller).
    if (targetWidth === width) return;
    const columns = { x: Math.floor(targetWidth / 3), width: Math.max(1, Math.floor(targetWidth / 2)) };
    const cut = await collectFrame(resizeRows(bandsOf(image, [16], !opaque), targetWidth, targetHeight, columns));
    expect(cut.width).toBe(columns.width);
    expect(Buffer.from(cut.data).equals(Buffer.from(reference(image, targetWidth, targetHeight, columns, opaque)))).toBe(true);
  });
});
