import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blurRowsReference, grayscaleRowsReference, sharpenRowsReference } from '../../../test/support/filters-reference';
import { xorshift } from '../../../test/support/image-testing';
import { bandsOf, readBands } from '../../../test/support/row-sources';
import { blurRows } from './blur';
import { grayscaleRows } from './grayscale';
import type { RowSource } from './rows';
import { sharpenRows } from './sharpen';
import type { RgbaImage } from '../types';

/*
 * The blur, sharpen and grayscale kernels (codecs/kernels/filters.c) against the TypeScript stages
 * they replaced (test/support/filters-reference.ts), byte for byte: every sigma's path (every pixel
 * below 8, the grid from 8, sums that stop being exact in any order past about 330 with alpha),
 * opaque, grey and transparent pictures, any band heights.
 */

type Kind = 'noise' | 'smooth' | 'alpha noise' | 'grey';

/**
 * A picture that reaches every path: noise in every byte value, a smooth field whose sums fall
 * near every half (where the kernels check their rounding), flat runs; alpha of every value (0 and
 * 255 often) for 'alpha noise'.
 */
function picture(width: number, height: number, seed: number, kind: Kind): RgbaImage {
  const next = xorshift(seed);
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const s = next();
      for (let c = 0; c < 3; c++) {
        const smooth = 128 + 100 * Math.sin((x + 3 * c) / 9) * Math.cos(y / 7);
        data[i + c] = kind === 'smooth' ? (x > width / 2 && y % 5 === 0 ? 40 : smooth) : (s >>> (8 * c)) & 255;
      }
      if (kind === 'grey') data[i + 1] = data[i + 2] = data[i];
      const a = (s >>> 24) % 4;
      data[i + 3] = kind === 'alpha noise' ? (a === 0 ? 0 : a === 1 ? 255 : (s >>> 3) & 255) : 255;
    }
  }
  return { data, width, height };
}

const sourceOf = (image: RgbaImage, kind: Kind, heights: number[]): RowSource => ({
  ...bandsOf(image, heights, kind === 'alpha noise'),
  grey: kind === 'grey',
});

async function same(image: RgbaImage, kind: Kind, stage: (source: RowSource) => RowSource, reference: (source: RowSource) => RowSource): Promise<boolean> {
  const ours = await readBands(stage(sourceOf(image, kind, [7, 16, 1, 64])));
  const theirs = await readBands(reference(sourceOf(image, kind, [16])));
  return Buffer.from(ours.image.data).equals(Buffer.from(theirs.image.data));
}

const kinds = fc.constantFrom<Kind>('noise', 'smooth', 'alpha noise', 'grey');

describe('blur, sharpen and grayscale kernels in WebAssembly', () => {
  it('blur the same as the TypeScript, byte for byte: every sigma, picture and band height', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 120 }),
        fc.oneof(fc.double({ min: 0.3, max: 8, noNaN: true }), fc.double({ min: 8, max: 60, noNaN: true }), fc.double({ min: 300, max: 1000, noNaN: true })),
        kinds,
        fc.integer(),
        async (width, height, sigma, kind, seed) => {
          const image = picture(width, height, seed, kind);
          expect(await same(image, kind, (s) => blurRows(s, sigma), (s) => blurRowsReference(s, sigma)), `${width}x${height} ${kind} sigma ${sigma}`).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('sharpen the same as the TypeScript, byte for byte: every sigma, picture and band height', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 120 }),
        fc.double({ min: 0.5, max: 10, noNaN: true }),
        kinds,
        fc.integer(),
        async (width, height, sigma, kind, seed) => {
          const image = picture(width, height, seed, kind);
          expect(await same(image, kind, (s) => sharpenRows(s, sigma), (s) => sharpenRowsReference(s, sigma)), `${width}x${height} ${kind} sigma ${sigma}`).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it.each([
    ['blur', 1600, 90, 'noise', 0.8],
    ['blur', 1600, 90, 'smooth', 2],
    ['blur', 1600, 90, 'alpha noise', 3],
    ['blur', 1600, 90, 'smooth', 9],
    ['blur', 1600, 90, 'alpha noise', 30],
    ['blur', 1200, 60, 'noise', 120],
    ['sharpen', 1600, 90, 'smooth', 1],
    ['sharpen', 1600, 90, 'alpha noise', 2],
    ['sharpen', 1600, 90, 'noise', 9],
  ] as const)('%s of a %i px wide picture (%i rows, %s, sigma %f) as the TypeScript did', async (step, width, height, kind, sigma) => {
    const image = picture(width, height, width + height, kind);
    const ok = step === 'blur'
      ? await same(image, kind, (s) => blurRows(s, sigma), (s) => blurRowsReference(s, sigma))
      : await same(image, kind, (s) => sharpenRows(s, sigma), (s) => sharpenRowsReference(s, sigma));
    expect(ok).toBe(true);
  });

  it('grayscale the same as the TypeScript for every 7th of all 2^24 colours, alpha kept', async () => {
    const width = 4096;
    const height = Math.ceil(2 ** 24 / 7 / width);
    const data = new Uint8Array(width * height * 4);
    const words = new Uint32Array(data.buffer);
    for (let i = 0; i < words.length; i++) words[i] = (((i * 7) & 0xffffff) | ((i & 255) << 24)) >>> 0;
    const image = { data, width, height };
    expect(await same(image, 'alpha noise', grayscaleRows, grayscaleRowsReference)).toBe(true);
  });
});
