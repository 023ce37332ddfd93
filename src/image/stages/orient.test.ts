import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Orientation } from '../exif';

import { applyOrientation, orientRows, storedRegion, turned } from './orient';
import type { RgbaImage } from '../types';
import { sameBytes, xorshift } from '../../../test/support/image-testing';
import { collectFrame, crop, frameSource } from '../../../test/support/row-sources';

/** A 3x2 image whose six pixels are told apart by their first byte: 'A'..'F'. */
//   A B C
//   D E F
function abc(): RgbaImage {
  const data = new Uint8Array(3 * 2 * 4);
  'ABCDEF'.split('').forEach((ch, i) => data.set([ch.charCodeAt(0), i * 10, 255 - i, 200 + i], i * 4));
  return { data, width: 3, height: 2 };
}

/** The picture as rows of letters, checking the other three bytes travel with the first. */
function letters(image: RgbaImage): string[] {
  const rows: string[] = [];
  for (let y = 0; y < image.height; y++) {
    let row = '';
    for (let x = 0; x < image.width; x++) {
      const p = (y * image.width + x) * 4;
      const i = image.data[p] - 65;
      expect(Array.from(image.data.subarray(p + 1, p + 4))).toEqual([i * 10, 255 - i, 200 + i]);
      row += String.fromCharCode(image.data[p]);
    }
    rows.push(row);
  }
  return rows;
}

function random(width: number, height: number, seed: number): RgbaImage {
  const next = xorshift(seed);
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i++) data[i] = next() & 255;
  return { data, width, height };
}

function same(a: RgbaImage, b: RgbaImage): void {
  expect(a.width).toBe(b.width);
  expect(a.height).toBe(b.height);
  expect(a.data.length).toBe(b.data.length);
  let firstDifference = -1;
  for (let i = 0; i < a.data.length && firstDifference < 0; i++) if (a.data[i] !== b.data[i]) firstDifference = i;
  expect(firstDifference).toBe(-1);
}

const orient = (image: RgbaImage, ...steps: Orientation[]) => steps.reduce(applyOrientation, image);

describe('applyOrientation', () => {
  it.each([
    [1, ['ABC', 'DEF']],
    [2, ['CBA', 'FED']],
    [3, ['FED', 'CBA']],
    [4, ['DEF', 'ABC']],
    [5, ['AD', 'BE', 'CF']],
    [6, ['DA', 'EB', 'FC']],
    [7, ['FC', 'EB', 'DA']],
    [8, ['CF', 'BE', 'AD']],
  ] as const)('orientation %i shows the 3x2 image as %j', (o, expected) => {
    const out = applyOrientation(abc(), o);
    expect(out.width).toBe(expected[0].length);
    expect(out.height).toBe(expected.length);
    expect(letters(out)).toEqual(expected);
  });

  it('returns the very same object for orientation 1 and new pixels otherwise', () => {
    const src = abc();
    expect(applyOrientation(src, 1)).toBe(src);
    for (const o of [2, 3, 4, 5, 6, 7, 8] as const) {
      const out = applyOrientation(src, o);
      expect(out.data.buffer).not.toBe(src.data.buffer);
    }
    expect(letters(src)).toEqual(['ABC', 'DEF']);
  });

  it('rejects values that are not EXIF orientations', () => {
    for (const o of [0, 9, 1.5, -1, Number.NaN]) expect(() => applyOrientation(abc(), o)).toThrow(Error);
  });

  it('accepts Uint8ClampedArray pixels and unaligned views', () => {
    const src = abc();
    const buf = new Uint8Array(src.data.length + 1);
    buf.set(src.data, 1);
    expect(letters(applyOrientation({ ...src, data: buf.subarray(1) }, 6))).toEqual(['DA', 'EB', 'FC']);
    expect(letters(applyOrientation({ ...src, data: new Uint8ClampedArray(src.data) }, 8))).toEqual(['CF', 'BE', 'AD']);
  });

  it('handles images larger than one tile, and 1xN / Nx1 shapes', () => {
    const big = random(150, 70, 7);
    const cw = applyOrientation(big, 6);
    expect([cw.width, cw.height]).toEqual([70, 150]);
    // Spot check rotate 90 CW: display (x, y) = stored (y, h-1-x).
    for (const [x, y] of [[0, 0], [69, 149], [13, 101], [69, 0], [0, 149]]) {
      const d = (y * 70 + x) * 4;
      const s = ((70 - 1 - x) * 150 + y) * 4;
      expect(Array.from(cw.data.subarray(d, d + 4))).toEqual(Array.from(big.data.subarray(s, s + 4)));
    }
    for (const [w, h] of [[1, 9], [9, 1], [1, 1]]) {
      const img = random(w, h, w * 31 + h);
      for (const o of [2, 3, 4, 5, 6, 7, 8] as const) {
        const out = applyOrientation(img, o);
        expect(out.width * out.height).toBe(w * h);
        same(orient(out, o === 6 ? 8 : o === 8 ? 6 : o), img);
      }
    }
  });

  it('property: the group laws of the eight orientations hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 1, max: 90 }), fc.integer(), (w, h, seed) => {
        const img = random(w, h, seed);
        same(orient(img, 6, 8), img);
        same(orient(img, 8, 6), img);
        same(orient(img, 6, 6, 6, 6), img);
        for (const o of [2, 3, 4, 5, 7] as const) same(orient(img, o, o), img);
        same(orient(img, 6, 6), orient(img, 3));
        same(orient(img, 2, 4), orient(img, 3));
        same(orient(img, 6, 2), orient(img, 5));
        same(orient(img, 8, 2), orient(img, 7));
      }),
      { numRuns: 40 },
    );
  });
});

describe('orientRows: the orientation stage', () => {
  const random = (width: number, height: number, seed: number, opacity: 'opaque' | 'alpha' | 'grey'): RgbaImage => {
    const data = new Uint8Array(width * height * 4);
    let s = seed >>> 0;
    for (let i = 0; i < data.length; i += 4) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const v = s >>> 8;
      const r = v & 255;
      data.set(opacity === 'grey' ? [r, r, r, 255] : [r, (v >> 8) & 255, (v >> 16) & 255, opacity === 'alpha' ? (s >>> 3) & 255 : 255], i);
    }
    return { data, width, height };
  };

  it('gives exactly what applyOrientation gives, for every orientation, frame form and band height', async () => {
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8]) {
      for (const opacity of ['opaque', 'alpha', 'grey'] as const) {
        for (const [w, h, bandRows] of [[37, 23, 5], [1, 9, 4], [9, 1, 16], [64, 65, 64]]) {
          const image = random(w, h, orientation * 1000 + w, opacity);
          const source = frameSource(image, { alpha: opacity === 'alpha', grey: opacity === 'grey' }, undefined, bandRows);
          const oriented = await collectFrame(orientRows(source, orientation));
          const expected = applyOrientation(image, orientation);
          expect([oriented.width, oriented.height]).toEqual([expected.width, expected.height]);
          expect(sameBytes(oriented.data, expected.data), `orientation ${orientation}, ${opacity}, ${w}x${h}`).toBe(true);
        }
      }
    }
  });

  it('holds the reordered frame in its most compact form: 1 byte a pixel for opaque grey, 3 for opaque colour, 4 with alpha', async () => {
    for (const [opacity, bytesPerPixel] of [['grey', 1], ['opaque', 3], ['alpha', 4]] as const) {
      const source = frameSource(random(100, 50, 1, opacity), { alpha: opacity === 'alpha', grey: opacity === 'grey' });
      const oriented = orientRows(source, 6);
      await oriented.read();
      expect(oriented.heldBytes()).toBe(100 * 50 * bytesPerPixel + 16 * 50 * 4);
    }
  });

  it('storedRegion: cropping the displayed image equals orienting the crop of the stored region', () => {
    const image = random(13, 7, 5, 'alpha');
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const displayed = applyOrientation(image, orientation);
      for (const region of [{ x: 0, y: 0, width: displayed.width, height: displayed.height }, { x: 2, y: 1, width: 3, height: 4 }, { x: displayed.width - 1, y: displayed.height - 2, width: 1, height: 2 }]) {
        const expected = crop(displayed, region);
        const actual = applyOrientation(crop(image, storedRegion(region, orientation, image)), orientation);
        expect(sameBytes(actual.data, expected.data), `orientation ${orientation} region ${JSON.stringify(region)}`).toBe(true);
      }
    }
  });
});

describe('turned: a rotation or flip after an orientation', () => {
  const orientations = [1, 2, 3, 4, 5, 6, 7, 8] as const;
  it('shows what applying one after the other shows', () => {
    const image = abc();
    for (const first of orientations) {
      for (const then of orientations) {
        expect(letters(applyOrientation(image, turned(first, then))), `${first} then ${then}`).toEqual(letters(applyOrientation(applyOrientation(image, first), then)));
      }
    }
  });

  it('comes back to upright after four quarter turns or two flips', () => {
    let orientation: Orientation = 1;
    for (let i = 0; i < 4; i++) orientation = turned(orientation, 6);
    expect(orientation).toBe(1);
    expect(turned(turned(1, 2), 2)).toBe(1);
    expect(turned(6, 8)).toBe(1);
  });
});
