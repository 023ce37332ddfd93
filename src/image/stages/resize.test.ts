import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { contributions } from './lanczos';
import { resize } from './resize';
import type { RgbaImage } from '../types';

function solid(width: number, height: number, rgba: readonly number[]): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { data, width, height };
}

function fromPixels(width: number, height: number, pixels: number[][]): RgbaImage {
  return { data: Uint8Array.from(pixels.flat()), width, height };
}

function pixelAt(image: RgbaImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return Array.from(image.data.subarray(i, i + 4));
}

/** Smooth content (no overshoot of a Lanczos filter beyond 0..255) plus a little noise. */
function smooth(width: number, height: number, seed: number, alpha?: (x: number, y: number) => number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let s = seed >>> 0 || 1;
  const noise = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s & 7) - 3.5;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      data[p] = Math.round(128 + 90 * Math.sin(x / 7 + seed) + noise());
      data[p + 1] = Math.round(128 + 90 * Math.cos(y / 5 - seed) + noise());
      data[p + 2] = Math.round(128 + 60 * Math.sin((x + y) / 9) + noise());
      data[p + 3] = alpha ? alpha(x, y) : 255;
    }
  }
  return { data, width, height };
}

/** Plain f x f box means, rounded to nearest (sizes divisible by f). */
function averageBoxes(image: RgbaImage, f: number): RgbaImage {
  const width = image.width / f;
  const height = image.height / f;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 4; c++) {
        let sum = 0;
        for (let dy = 0; dy < f; dy++) for (let dx = 0; dx < f; dx++) sum += image.data[((y * f + dy) * image.width + x * f + dx) * 4 + c];
        data[(y * width + x) * 4 + c] = Math.floor(sum / (f * f) + 0.5);
      }
  return { data, width, height };
}

/** Straightforward float64 Lanczos-3 (same geometry: centre-aligned, scaled support, clamped edges). */
function referenceResize(image: RgbaImage, width: number, height: number): Float64Array {
  const lanczos = (x: number) => {
    if (x === 0) return 1;
    if (Math.abs(x) >= 3) return 0;
    const px = Math.PI * x;
    return (3 * Math.sin(px) * Math.sin(px / 3)) / (px * px);
  };
  const weightsFor = (inSize: number, outSize: number) =>
    Array.from({ length: outSize }, (_, o) => {
      const scale = inSize / outSize;
      const fs = Math.max(1, scale);
      const centre = (o + 0.5) * scale - 0.5;
      const taps = new Map<number, number>();
      let sum = 0;
      for (let j = Math.floor(centre - 3 * fs); j <= Math.ceil(centre + 3 * fs); j++) {
        const w = lanczos((j - centre) / fs);
        const k = Math.min(inSize - 1, Math.max(0, j));
        taps.set(k, (taps.get(k) ?? 0) + w);
        sum += w;
      }
      return [...taps].map(([k, w]) => [k, w / sum] as const);
    });
  const wx = weightsFor(image.width, width);
  const wy = weightsFor(image.height, height);
  const pre = new Float64Array(image.data.length);
  for (let i = 0; i < pre.length; i += 4) {
    const a = image.data[i + 3] / 255;
    for (let c = 0; c < 3; c++) pre[i + c] = image.data[i + c] * a;
    pre[i + 3] = image.data[i + 3];
  }
  const mid = new Float64Array(width * image.height * 4);
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < width; x++)
      for (const [k, w] of wx[x]) for (let c = 0; c < 4; c++) mid[(y * width + x) * 4 + c] += w * pre[(y * image.width + k) * 4 + c];
  const out = new Float64Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (const [k, w] of wy[y]) for (let c = 0; c < 4; c++) out[(y * width + x) * 4 + c] += w * mid[(k * width + x) * 4 + c];
  for (let i = 0; i < out.length; i += 4) {
    const a = out[i + 3];
    for (let c = 0; c < 3; c++) out[i + c] = a > 0 ? (out[i + c] * 255) / a : 0;
  }
  return out;
}

describe('resize', () => {
  it('keeps a constant image constant, opaque or not, up and down', () => {
    for (const colour of [[12, 200, 99, 255], [200, 100, 50, 77], [1, 2, 3, 1], [0, 0, 0, 0], [255, 255, 255, 255]]) {
      for (const [w, h, tw, th] of [[9, 7, 4, 3], [9, 7, 20, 31], [5, 5, 5, 2], [5, 5, 13, 5], [1, 1, 7, 3], [7, 3, 1, 1]]) {
        const out = resize(solid(w, h, colour), tw, th);
        expect([out.width, out.height]).toEqual([tw, th]);
        for (let i = 0; i < out.data.length; i += 4) expect(Array.from(out.data.subarray(i, i + 4))).toEqual(colour);
      }
    }
  });

  it('averages a 2x2 image into 1x1', () => {
    const src = fromPixels(2, 2, [[10, 0, 100, 255], [20, 40, 100, 255], [30, 80, 0, 255], [40, 120, 200, 255]]);
    expect(pixelAt(resize(src, 1, 1), 0, 0)).toEqual([25, 60, 100, 255]);
    // Along one axis only.
    expect(Array.from(resize(src, 1, 2).data)).toEqual([15, 20, 100, 255, 35, 100, 100, 255]);
    expect(Array.from(resize(src, 2, 1).data)).toEqual([20, 40, 50, 255, 30, 80, 150, 255]);
  });

  it('averages by alpha weight: a transparent pixel contributes no colour', () => {
    const src = fromPixels(2, 1, [[255, 0, 0, 0], [0, 0, 255, 255]]);
    expect(pixelAt(resize(src, 1, 1), 0, 0)).toEqual([0, 0, 255, 128]);
  });

  it('makes no fringes where transparent pixels meet opaque ones (premultiplied)', () => {
    for (const hidden of [[255, 0, 0, 0], [0, 0, 0, 0], [255, 255, 255, 0]]) {
      // Left half hidden (transparent), right half opaque blue.
      const w = 24;
      const h = 6;
      const src = solid(w, h, [0, 0, 255, 255]);
      for (let y = 0; y < h; y++) for (let x = 0; x < w / 2; x++) src.data.set(hidden, (y * w + x) * 4);
      for (const [tw, th] of [[7, 3], [10, 6], [50, 6], [17, 13]]) {
        const out = resize(src, tw, th);
        let partial = 0;
        for (let i = 0; i < out.data.length; i += 4) {
          const [r, g, b, a] = out.data.subarray(i, i + 4);
          if (a === 0) continue;
          if (a < 255) partial++;
          // Every visible pixel is pure blue: no red bleeding in, no darkening, no lightening.
          expect([r, g, b], `${tw}x${th} pixel ${i / 4} alpha ${a}`).toEqual([0, 0, 255]);
        }
        expect(partial).toBeGreaterThan(0);
      }
    }
  });

  it('keeps opaque images fully opaque', () => {
    const src = smooth(37, 23, 3);
    src.data[5 * 4] = 0; // a black pixel, a bright one: ringing must not touch alpha
    src.data[9 * 4 + 1] = 255;
    for (const [tw, th] of [[11, 7], [80, 50], [37, 9], [3, 23], [1, 1]]) {
      const out = resize(src, tw, th);
      for (let i = 3; i < out.data.length; i += 4) expect(out.data[i]).toBe(255);
    }
  });

  it('returns equal pixels for the identity size, as a copy', () => {
    const src = smooth(13, 8, 5);
    const out = resize(src, 13, 8);
    expect(Array.from(out.data)).toEqual(Array.from(src.data));
    out.data[0] ^= 1;
    expect(out.data[0]).not.toBe(src.data[0]);
  });

  it('matches a straightforward float Lanczos-3 (two roundings: at most 1.5 levels, 0.3 on average)', () => {
    const cases: [RgbaImage, number, number][] = [
      [smooth(40, 30, 1), 17, 11],
      [smooth(40, 30, 2), 93, 71],
      [smooth(40, 30, 3), 40, 13],
      [smooth(23, 31, 4), 9, 64],
      [smooth(31, 17, 5, (x, y) => 40 + ((x * 7 + y * 3) % 200)), 12, 40],
      [smooth(31, 17, 6, (x) => Math.min(255, x * 9)), 45, 9],
    ];
    for (const [src, tw, th] of cases) {
      const out = resize(src, tw, th);
      const ref = referenceResize(src, tw, th);
      let worst = 0;
      let total = 0;
      for (let i = 0; i < ref.length; i++) {
        // Colour of a nearly transparent pixel is ill-conditioned; compare its premultiplied value.
        const a = ref[i - (i % 4) + 3] / 255;
        const scale = i % 4 === 3 ? 1 : Math.min(1, a * 4);
        const error = Math.abs(out.data[i] - Math.min(255, Math.max(0, ref[i]))) * scale;
        worst = Math.max(worst, error);
        total += error;
      }
      expect(worst, `${src.width}x${src.height} -> ${tw}x${th}`).toBeLessThanOrEqual(1.5);
      expect(total / ref.length, `${src.width}x${src.height} -> ${tw}x${th}`).toBeLessThan(0.3);
    }
  });

  it('reduces an opaque image 4x or more by box-averaging first, as vips_resize does (gap 2)', () => {
    // 8x: 4x4 boxes (the largest factor leaving twice the target) down to 40x22, then Lanczos-3.
    const photoLike = smooth(160, 88, 11);
    const direct = resize(photoLike, 20, 11);
    const boxed = resize(averageBoxes(photoLike, 4), 20, 11);
    expect(Array.from(direct.data)).toEqual(Array.from(boxed.data));
    // It stays close to a pure float Lanczos-3 of the whole image.
    const reference = referenceResize(photoLike, 20, 11);
    let worst = 0;
    let total = 0;
    for (let i = 0; i < reference.length; i++) {
      const error = Math.abs(direct.data[i] - reference[i]);
      worst = Math.max(worst, error);
      total += error;
    }
    expect(worst).toBeLessThanOrEqual(4);
    expect(total / reference.length).toBeLessThan(1);
  });

  it('reduces an image with transparency by Lanczos-3 alone, premultiplied (no box step)', () => {
    const translucent = smooth(160, 90, 12, (x, y) => 60 + ((x * 3 + y) % 190));
    const out = resize(translucent, 20, 11);
    const reference = referenceResize(translucent, 20, 11);
    for (let i = 0; i < reference.length; i++) {
      const a = reference[i - (i % 4) + 3] / 255;
      const scale = i % 4 === 3 ? 1 : Math.min(1, a * 4);
      expect(Math.abs(out.data[i] - Math.min(255, Math.max(0, reference[i]))) * scale).toBeLessThanOrEqual(1.5);
    }
  });

  it('handles 1xN, Nx1, large upscales and extreme ratios', () => {
    const column = smooth(1, 50, 7);
    const row = smooth(50, 1, 8);
    expect(resize(column, 1, 7).data.length).toBe(7 * 4);
    expect(resize(column, 5, 7).data.length).toBe(35 * 4);
    expect(resize(row, 7, 1).data.length).toBe(7 * 4);
    expect(resize(row, 12000, 1).data.length).toBe(12000 * 4);
    expect(resize(solid(1, 1, [9, 8, 7, 255]), 12000, 2).data.length).toBe(24000 * 4);
    const tall = resize(solid(2, 2, [9, 8, 7, 130]), 1, 12000);
    for (let i = 0; i < tall.data.length; i += 4) expect(Array.from(tall.data.subarray(i, i + 4))).toEqual([9, 8, 7, 130]);

    // 4000 -> 1: the mean of a symmetric ramp is its midpoint.
    const ramp: RgbaImage = { data: new Uint8Array(4000 * 4), width: 4000, height: 1 };
    for (let x = 0; x < 4000; x++) ramp.data.set([Math.floor((x * 256) / 4000), 255 - Math.floor((x * 256) / 4000), 77, 255], x * 4);
    const one = pixelAt(resize(ramp, 1, 1), 0, 0);
    expect(Math.abs(one[0] - 127.5)).toBeLessThanOrEqual(1);
    expect(Math.abs(one[1] - 127.5)).toBeLessThanOrEqual(1);
    expect(one.slice(2)).toEqual([77, 255]);
    const ramp2d = resize({ data: new Uint8Array(4000 * 3 * 4).fill(200), width: 4000, height: 3 }, 1, 1);
    expect(Array.from(ramp2d.data)).toEqual([200, 200, 200, 200]);
  });

  it('accepts Uint8ClampedArray input and unaligned views', () => {
    const src = smooth(20, 10, 9);
    const expected = Array.from(resize(src, 7, 4).data);
    expect(Array.from(resize({ ...src, data: new Uint8ClampedArray(src.data) }, 7, 4).data)).toEqual(expected);
    const buf = new Uint8Array(src.data.length + 1);
    buf.set(src.data, 1);
    expect(Array.from(resize({ ...src, data: buf.subarray(1) }, 7, 4).data)).toEqual(expected);
  });

  it('rejects invalid sizes with a plain Error', () => {
    const src = solid(4, 4, [1, 2, 3, 4]);
    for (const [w, h] of [[0, 3], [3, 0], [1.5, 2], [-1, 2], [Number.NaN, 2]]) expect(() => resize(src, w, h)).toThrow(Error);
    expect(() => resize({ data: new Uint8Array(10), width: 4, height: 4 }, 2, 2)).toThrow(Error);
  });

  it('property: output size, and a constant stays constant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 90 }),
        fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)),
        (w, h, tw, th, colour) => {
          const out = resize(solid(w, h, colour), tw, th);
          expect([out.width, out.height, out.data.length]).toEqual([tw, th, tw * th * 4]);
          const expected = colour[3] === 0 ? [0, 0, 0, 0] : colour;
          for (let i = 0; i < out.data.length; i += 4) expect(Array.from(out.data.subarray(i, i + 4))).toEqual(expected);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('property: arbitrary pixels give bytes in range, opaque stays opaque, alpha 0 means colour 0', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.boolean(),
        fc.integer(),
        (w, h, tw, th, opaque, seed) => {
          const src = smooth(w, h, seed);
          let s = seed >>> 0 || 1;
          for (let i = 0; i < src.data.length; i++) {
            s ^= s << 13;
            s ^= s >>> 17;
            s ^= s << 5;
            src.data[i] = i % 4 === 3 && opaque ? 255 : s & 255;
          }
          const out = resize(src, tw, th);
          expect(out.data.length).toBe(tw * th * 4);
          expect(out.data).toBeInstanceOf(Uint8Array);
          for (let i = 0; i < out.data.length; i += 4) {
            if (opaque) expect(out.data[i + 3]).toBe(255);
            if (out.data[i + 3] === 0) expect(out.data[i] | out.data[i + 1] | out.data[i + 2]).toBe(0);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('Lanczos filters', () => {
  it('computes a small filter once for repeated sizes (the plan and the run ask for the same), and keeps no large one', () => {
    expect(contributions(750, 600)).toBe(contributions(750, 600));
    expect(contributions(750, 600, 2.5)).not.toBe(contributions(750, 600));
    const large = contributions(48_000, 100);
    expect(large.weights.byteLength).toBeGreaterThan(32 * 1024);
    expect(contributions(48_000, 100)).not.toBe(large);
    expect(contributions(48_000, 100)).toEqual(large);
  });
});
