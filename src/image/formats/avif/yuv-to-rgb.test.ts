import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors';
import type { Samples } from './dav1d';
import { AlphaTable, YuvToRgb, type ChromaUpsampling, type RowSamples, type YuvFormat } from './yuv-to-rgb';

/**
 * libavif's avifImageYUVAnyToRGBAnySlow, pixel by pixel and written out plainly from reformat.c:
 * the oracle the fast row conversions must match.
 */
function libavifPixel(planes: Planes, format: YuvFormat, upsampling: ChromaUpsampling, x: number, y: number): number[] {
  const { bitDepth, layout, matrix, fullRange } = format;
  const max = 2 ** bitDepth - 1;
  const biasY = fullRange ? 0 : 16 << (bitDepth - 8);
  const rangeY = fullRange ? max : 219 << (bitDepth - 8);
  const biasUV = 1 << (bitDepth - 1);
  const rangeUV = fullRange ? max : 224 << (bitDepth - 8);
  const unitY = (code: number) => (code - biasY) / rangeY;
  const unitUV = (code: number) => (code - biasUV) / rangeUV;
  const Y = unitY(planes.y[y * planes.width + x]);
  let R: number;
  let G: number;
  let B: number;
  if (layout === 0) {
    R = G = B = Y;
  } else {
    const shiftX = layout === 3 ? 0 : 1;
    const shiftY = layout === 1 ? 1 : 0;
    const chromaWidth = (planes.width + shiftX) >> shiftX;
    const sample = (plane: Samples, cx: number, cy: number) => plane[cy * chromaWidth + cx];
    const cx = x >> shiftX;
    const cy = y >> shiftY;
    let cb: number;
    let cr: number;
    if (layout === 3 || upsampling === 'nearest') {
      cb = unitUV(sample(planes.u, cx, cy));
      cr = unitUV(sample(planes.v, cx, cy));
    } else {
      const adjacentColumn = x === 0 || (x === planes.width - 1 && x % 2 !== 0) ? cx : x % 2 !== 0 ? cx + 1 : cx - 1;
      const adjacentRow = y === 0 || (y === planes.height - 1 && y % 2 !== 0) || layout === 2 ? cy : y % 2 !== 0 ? cy + 1 : cy - 1;
      const blend = (plane: Samples) =>
        unitUV(sample(plane, cx, cy)) * (9 / 16) + unitUV(sample(plane, adjacentColumn, cy)) * (3 / 16) +
        unitUV(sample(plane, cx, adjacentRow)) * (3 / 16) + unitUV(sample(plane, adjacentColumn, adjacentRow)) * (1 / 16);
      cb = blend(planes.u);
      cr = blend(planes.v);
    }
    if (matrix === 0) {
      G = Y;
      B = unitY(sample(planes.u, cx, cy));
      R = unitY(sample(planes.v, cx, cy));
    } else if (matrix === 8) {
      const t = Y - cb;
      G = Y + cb;
      B = t - cr;
      R = t + cr;
    } else {
      const [kr, kb] = matrix === 1 ? [0.2126, 0.0722] : matrix === 9 ? [0.2627, 0.0593] : [0.299, 0.114];
      const kg = 1 - kr - kb;
      R = Y + 2 * (1 - kr) * cr;
      B = Y + 2 * (1 - kb) * cb;
      G = Y - (2 * (kr * (1 - kr) * cr + kb * (1 - kb) * cb)) / kg;
    }
  }
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  return [R, G, B].map((v) => Math.trunc(0.5 + clamp(v) * 255));
}

interface Planes {
  width: number;
  height: number;
  y: Samples;
  u: Samples;
  v: Samples;
}

/** Random planes (a fixed seed), codes over the whole range including the limited range's margins. */
function randomPlanes(width: number, height: number, format: YuvFormat, seed: number): Planes {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const max = 2 ** format.bitDepth - 1;
  const make = (length: number) => {
    const plane = format.bitDepth === 8 ? new Uint8Array(length) : new Uint16Array(length);
    for (let i = 0; i < length; i++) plane[i] = Math.round(next() * max);
    return plane;
  };
  const shiftX = format.layout === 3 ? 0 : 1;
  const shiftY = format.layout === 1 ? 1 : 0;
  const chroma = ((width + shiftX) >> shiftX) * ((height + shiftY) >> shiftY);
  return { width, height, y: make(width * height), u: make(chroma), v: make(chroma) };
}

/** Converts rows [0, height) of `planes`, columns [x0, x0 + count), with the decoder's row bookkeeping. */
function convert(planes: Planes, format: YuvFormat, upsampling: ChromaUpsampling, x0 = 0, count = planes.width): Uint8Array {
  const conversion = new YuvToRgb(format, upsampling);
  const out = new Uint32Array(count * planes.height);
  const shiftX = format.layout === 3 ? 0 : 1;
  const chromaWidth = (planes.width + shiftX) >> shiftX;
  for (let y = 0; y < planes.height; y++) {
    const [c0, c1] = conversion.chromaRows(y, planes.height);
    const rows: RowSamples = {
      y: planes.y, yAt: y * planes.width,
      u0: planes.u, u0At: c0 * chromaWidth, u1: planes.u, u1At: c1 * chromaWidth,
      v0: planes.v, v0At: c0 * chromaWidth, v1: planes.v, v1At: c1 * chromaWidth,
    };
    conversion.convert(out, y * count, x0, count, planes.width, rows);
  }
  return new Uint8Array(out.buffer);
}

const LAYOUTS = [
  ['4:0:0', 0],
  ['4:2:0', 1],
  ['4:2:2', 2],
  ['4:4:4', 3],
] as const;

describe('YUV to RGB as libavif converts by default', () => {
  it('matches libavif\'s per-pixel formulas for every layout, bit depth, range, matrix and upsampling', () => {
    let pixels = 0;
    let offByOne = 0;
    for (const [, layout] of LAYOUTS) {
      for (const bitDepth of [8, 10, 12] as const) {
        for (const fullRange of [true, false]) {
          for (const matrix of layout === 3 ? [1, 2, 6, 9, 0, 8] : [1, 2, 6, 9]) {
            if (matrix === 8 && !fullRange) continue;
            for (const upsampling of ['bilinear', 'nearest'] as const) {
              const format = { bitDepth, layout, matrix, fullRange };
              // Odd sizes exercise libavif's edge rules on the last column and row.
              const planes = randomPlanes(13, 9, format, bitDepth * 100 + layout * 10 + matrix);
              const ours = convert(planes, format, upsampling);
              for (let y = 0; y < planes.height; y++) {
                for (let x = 0; x < planes.width; x++) {
                  const expected = libavifPixel(planes, format, upsampling, x, y);
                  const at = (y * planes.width + x) * 4;
                  for (let c = 0; c < 3; c++) {
                    const difference = Math.abs(ours[at + c] - expected[c]);
                    // libavif computes in float32, this in float64: a value on a rounding boundary may land either side.
                    expect(difference, `${JSON.stringify(format)} ${upsampling} (${x}, ${y}) channel ${c}`).toBeLessThanOrEqual(1);
                    if (difference) offByOne++;
                  }
                  expect(ours[at + 3]).toBe(255);
                  pixels++;
                }
              }
            }
          }
        }
      }
    }
    expect(offByOne / (pixels * 3)).toBeLessThan(0.001);
  });

  it('converts any run of columns exactly as it converts them within the whole row', () => {
    for (const [name, layout] of LAYOUTS) {
      const format = { bitDepth: 8 as const, layout, matrix: 6, fullRange: false };
      const planes = randomPlanes(17, 6, format, 7);
      const whole = convert(planes, format, 'bilinear');
      for (const [x0, count] of [[0, 1], [1, 1], [1, 2], [2, 7], [5, 12], [16, 1], [3, 14]]) {
        const part = convert(planes, format, 'bilinear', x0, count);
        for (let y = 0; y < planes.height; y++) {
          const expected = whole.subarray((y * 17 + x0) * 4, (y * 17 + x0 + count) * 4);
          expect(part.subarray(y * count * 4, (y + 1) * count * 4), `${name} columns ${x0}+${count} row ${y}`).toEqual(expected);
        }
      }
    }
  });

  it('maps the range ends to black and white at every bit depth', () => {
    for (const bitDepth of [8, 10, 12] as const) {
      for (const fullRange of [true, false]) {
        const scale = 2 ** (bitDepth - 8);
        const [black, white] = fullRange ? [0, 2 ** bitDepth - 1] : [16 * scale, 235 * scale];
        const neutral = 2 ** (bitDepth - 1);
        const format = { bitDepth, layout: 3, matrix: 1, fullRange };
        const plane = (values: number[]) => (bitDepth === 8 ? Uint8Array.from(values) : Uint16Array.from(values));
        const planes = { width: 2, height: 1, y: plane([black, white]), u: plane([neutral, neutral]), v: plane([neutral, neutral]) };
        expect([...convert(planes, format, 'bilinear')], `${bitDepth}-bit ${fullRange ? 'full' : 'limited'}`).toEqual([0, 0, 0, 255, 255, 255, 255, 255]);
      }
    }
  });

  it('refuses the matrices libavif cannot convert', () => {
    const refused = [
      { bitDepth: 8, layout: 1, matrix: 0, fullRange: true }, // identity needs 4:4:4
      { bitDepth: 8, layout: 3, matrix: 8, fullRange: false }, // YCgCo needs full range
      { bitDepth: 8, layout: 1, matrix: 3, fullRange: true }, // reserved
      { bitDepth: 10, layout: 1, matrix: 10, fullRange: true }, // BT.2020 constant luminance
      { bitDepth: 10, layout: 1, matrix: 14, fullRange: true }, // ICtCp
    ] as const;
    for (const format of refused) {
      expect(() => new YuvToRgb(format), JSON.stringify(format)).toThrow(AppError);
    }
    // Monochrome ignores the matrix.
    expect(() => new YuvToRgb({ bitDepth: 8, layout: 0, matrix: 3, fullRange: true })).not.toThrow();
  });
});

describe('alpha codes', () => {
  it('scale to 8 bits with rounding, limited range first stretched to full as libavif does', () => {
    expect([0, 1, 511, 512, 1023].map((code) => new AlphaTable(10, true).bytes[code])).toEqual([0, 0, 127, 128, 255]);
    expect([0, 2048, 4095].map((code) => new AlphaTable(12, true).bytes[code])).toEqual([0, 128, 255]);
    const limited = new AlphaTable(8, false);
    expect([0, 16, 17, 126, 235, 255].map((code) => limited.bytes[code])).toEqual([0, 0, 1, 128, 255, 255]);
    expect(limited.unit[235]).toBe(1);
    expect(new AlphaTable(10, false).bytes[64]).toBe(0);
  });
});
