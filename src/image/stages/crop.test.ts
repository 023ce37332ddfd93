import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cropRows } from './crop';
import type { RgbaImage } from '../types';
import { collectFrame, crop, frameSource } from '../../../test/support/row-sources';

/** Every pixel distinct and traceable: R = x, G = y, B = x ^ y, A = 255 - ((x + y) & 127). */
function labelled(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set([x & 255, y & 255, (x ^ y) & 255, 255 - ((x + y) & 127)], (y * width + x) * 4);
  }
  return { data, width, height };
}

function pixel(image: RgbaImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return Array.from(image.data.subarray(i, i + 4));
}

describe('crop', () => {
  it('returns exactly the pixels of the region', () => {
    const src = labelled(5, 4);
    const out = crop(src, { x: 1, y: 2, width: 3, height: 2 });
    expect(out.width).toBe(3);
    expect(out.height).toBe(2);
    expect(Array.from(out.data)).toEqual([
      ...[1, 2, 3, 252], ...[2, 2, 0, 251], ...[3, 2, 1, 250],
      ...[1, 3, 2, 251], ...[2, 3, 1, 250], ...[3, 3, 0, 249],
    ]);
  });

  it('handles full-width bands, single pixels and the whole image', () => {
    const src = labelled(6, 5);
    const band = crop(src, { x: 0, y: 1, width: 6, height: 3 });
    expect(Array.from(band.data)).toEqual(Array.from(src.data.subarray(6 * 4, 4 * 6 * 4)));
    expect(Array.from(crop(src, { x: 5, y: 4, width: 1, height: 1 }).data)).toEqual(pixel(src, 5, 4));
    const whole = crop(src, { x: 0, y: 0, width: 6, height: 5 });
    expect(whole).toEqual({ data: src.data, width: 6, height: 5 });
  });

  it('returns a copy that does not share memory with the source', () => {
    const src = labelled(4, 4);
    for (const region of [{ x: 0, y: 0, width: 4, height: 2 }, { x: 1, y: 1, width: 2, height: 2 }]) {
      const out = crop(src, region);
      out.data.fill(7);
      expect(pixel(src, 1, 1)).toEqual([1, 1, 0, 253]);
    }
  });

  it('accepts Uint8ClampedArray pixels and views with a byte offset', () => {
    const base = labelled(4, 3);
    const clamped = { ...base, data: new Uint8ClampedArray(base.data) };
    expect(Array.from(crop(clamped, { x: 2, y: 1, width: 2, height: 2 }).data)).toEqual(
      Array.from(crop(base, { x: 2, y: 1, width: 2, height: 2 }).data),
    );
    const buf = new Uint8Array(base.data.length + 3);
    buf.set(base.data, 3);
    const offset = { ...base, data: buf.subarray(3) };
    expect(Array.from(crop(offset, { x: 1, y: 0, width: 3, height: 3 }).data)).toEqual(
      Array.from(crop(base, { x: 1, y: 0, width: 3, height: 3 }).data),
    );
  });

  it('throws a plain Error for regions outside the image, empty or not integral', () => {
    const src = labelled(4, 3);
    const bad = [
      { x: -1, y: 0, width: 2, height: 2 },
      { x: 0, y: -1, width: 2, height: 2 },
      { x: 3, y: 0, width: 2, height: 1 },
      { x: 0, y: 2, width: 1, height: 2 },
      { x: 0, y: 0, width: 0, height: 1 },
      { x: 0, y: 0, width: 1, height: 0 },
      { x: 0.5, y: 0, width: 1, height: 1 },
      { x: 0, y: 0, width: Number.NaN, height: 1 },
      { x: 4, y: 3, width: 1, height: 1 },
    ];
    for (const region of bad) expect(() => crop(src, region), JSON.stringify(region)).toThrow(Error);
  });

  it('property: every output pixel is the source pixel at the offset position', () => {
    const arb = fc
      .record({ w: fc.integer({ min: 1, max: 24 }), h: fc.integer({ min: 1, max: 24 }) })
      .chain(({ w, h }) =>
        fc
          .record({ x: fc.integer({ min: 0, max: w - 1 }), y: fc.integer({ min: 0, max: h - 1 }) })
          .chain(({ x, y }) =>
            fc.record({
              w: fc.constant(w),
              h: fc.constant(h),
              x: fc.constant(x),
              y: fc.constant(y),
              cw: fc.integer({ min: 1, max: w - x }),
              ch: fc.integer({ min: 1, max: h - y }),
            }),
          ),
      );
    fc.assert(
      fc.property(arb, ({ w, h, x, y, cw, ch }) => {
        const src = labelled(w, h);
        const out = crop(src, { x, y, width: cw, height: ch });
        expect(out.data.length).toBe(cw * ch * 4);
        for (let j = 0; j < ch; j++) for (let i = 0; i < cw; i++) expect(pixel(out, i, j)).toEqual(pixel(src, x + i, y + j));
      }),
      { numRuns: 60 },
    );
  });
});

describe('cropRows: the crop stage', () => {
  it('gives exactly what crop gives, whatever the band height, and passes whole-width bands without copying', async () => {
    const width = 23;
    const height = 17;
    const data = new Uint8Array(width * height * 4).map((_, i) => (i * 31) % 251);
    const image = { data, width, height };
    for (const region of [{ x: 0, y: 0, width, height }, { x: 3, y: 2, width: 7, height: 9 }, { x: 0, y: 5, width, height: 4 }, { x: 22, y: 16, width: 1, height: 1 }]) {
      for (const bandRows of [1, 4, 16]) {
        const cropped = await collectFrame(cropRows(frameSource(image, { alpha: true }, undefined, bandRows), region));
        expect(Array.from(cropped.data), `${JSON.stringify(region)} bands of ${bandRows}`).toEqual(Array.from(crop(image, region).data));
      }
    }
    const source = frameSource(image, { alpha: true });
    expect(cropRows(source, { x: 0, y: 0, width, height })).toBe(source);
  });
});
