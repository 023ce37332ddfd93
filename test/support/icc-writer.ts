/**
 * Test-only ICC profile writer (ICC.1:2010): matrix/TRC RGB and grey profiles, lut16Type and
 * lutAToBType tags, and a generic assembler for hand-made (also hostile) profiles.
 */
import { expect } from 'vitest';
import { d50Colorants, D50, type Primaries } from '../../src/image/stages/colour/colorimetry.ts';
import { text, u16, u32 } from './byte-builders.ts';

export { u16, u32 };

/** Profile bytes as the colour description `toSrgb` takes. */
export function asIcc(bytes: Uint8Array | null): { kind: 'icc'; bytes: Uint8Array } | null {
  return bytes && { kind: 'icc', bytes };
}

export type Trc = { gamma: number } | { parametric: number[] } | { table: number[] } | 'identity';

export const SRGB: Primaries = { red: [0.64, 0.33], green: [0.3, 0.6], blue: [0.15, 0.06], white: [0.3127, 0.329] };
export const DISPLAY_P3: Primaries = { red: [0.68, 0.32], green: [0.265, 0.69], blue: [0.15, 0.06], white: [0.3127, 0.329] };
export const ADOBE_RGB: Primaries = { red: [0.64, 0.33], green: [0.21, 0.71], blue: [0.15, 0.06], white: [0.3127, 0.329] };
export const PROPHOTO: Primaries = { red: [0.7347, 0.2653], green: [0.1596, 0.8404], blue: [0.0366, 0.0001], white: [0.3457, 0.3585] };
/** The sRGB curve as parametric type 3. */
export const SRGB_TRC: Trc = { parametric: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045] };

export const s15 = (v: number) => u32(Math.round(v * 65536) >>> 0);
const pad4 = (bytes: number[]) => [...bytes, ...new Array<number>((4 - (bytes.length % 4)) % 4).fill(0)];

export interface ProfileOptions {
  colorSpace: 'RGB ' | 'GRAY' | 'CMYK' | string;
  pcs?: 'XYZ ' | 'Lab ';
  version?: 2 | 4;
  tags: [string, number[]][];
}

/** Header, tag table and tag data (identical tag data is not shared). */
export function iccProfile({ colorSpace, pcs = 'XYZ ', version = 4, tags }: ProfileOptions): Uint8Array {
  const tableEnd = 128 + 4 + 12 * tags.length;
  const table: number[] = [...u32(tags.length)];
  let data: number[] = [];
  for (const [signature, bytes] of tags) {
    table.push(...text(signature), ...u32(tableEnd + data.length), ...u32(bytes.length));
    data = data.concat(pad4(bytes));
  }
  const size = tableEnd + data.length;
  const header = [
    ...u32(size), ...text('test'), version, version === 4 ? 0x30 : 0x10, 0, 0,
    ...text(colorSpace === 'CMYK' ? 'prtr' : 'mntr'), ...text(colorSpace), ...text(pcs),
    ...new Array<number>(12).fill(0), ...text('acsp'), ...new Array<number>(28).fill(0),
    ...D50.flatMap(s15), ...new Array<number>(48).fill(0),
  ];
  return new Uint8Array(header.concat(table, data));
}

export function xyzTag([x, y, z]: readonly number[]): number[] {
  return [...text('XYZ '), 0, 0, 0, 0, ...s15(x), ...s15(y), ...s15(z)];
}

/** A `curv` (identity, gamma, table) or `para` element, unpadded. */
export function curveTag(trc: Trc): number[] {
  if (trc === 'identity') return [...text('curv'), 0, 0, 0, 0, ...u32(0)];
  if ('gamma' in trc) return [...text('curv'), 0, 0, 0, 0, ...u32(1), ...u16(Math.round(trc.gamma * 256))];
  if ('table' in trc) return [...text('curv'), 0, 0, 0, 0, ...u32(trc.table.length), ...trc.table.flatMap(u16)];
  const type = [1, 3, 4, 5, 7].indexOf(trc.parametric.length);
  return [...text('para'), 0, 0, 0, 0, ...u16(type), 0, 0, ...trc.parametric.flatMap(s15)];
}

/** A matrix/TRC RGB profile from primaries and white point (colorants Bradford-adapted to D50). */
export function rgbProfile(primaries: Primaries, trc: Trc, version: 2 | 4 = 4): Uint8Array {
  const m = d50Colorants(primaries);
  const curve = curveTag(trc);
  return iccProfile({
    colorSpace: 'RGB ',
    version,
    tags: [
      ['wtpt', xyzTag(D50)],
      ['rXYZ', xyzTag([m[0], m[3], m[6]])],
      ['gXYZ', xyzTag([m[1], m[4], m[7]])],
      ['bXYZ', xyzTag([m[2], m[5], m[8]])],
      ['rTRC', curve],
      ['gTRC', curve],
      ['bTRC', curve],
    ],
  });
}

export function greyProfile(trc: Trc, pcs: 'XYZ ' | 'Lab ' = 'XYZ '): Uint8Array {
  return iccProfile({ colorSpace: 'GRAY', pcs, tags: [['wtpt', xyzTag(D50)], ['kTRC', curveTag(trc)]] });
}

/** lut16Type with identity 2-entry input/output tables; `clut` holds 16-bit values, first input slowest. */
export function lut16Tag(inputs: number, grid: number, clut: number[]): number[] {
  const identityMatrix = [1, 0, 0, 0, 1, 0, 0, 0, 1].flatMap(s15);
  const ramp = [0, 0xffff].flatMap(u16);
  return [
    ...text('mft2'), 0, 0, 0, 0, inputs, 3, grid, 0, ...identityMatrix, ...u16(2), ...u16(2),
    ...new Array<number[]>(inputs).fill(ramp).flat(), ...clut.flatMap(u16), ...[ramp, ramp, ramp].flat(),
  ];
}

export interface LutAToB {
  inputs: number;
  b: Trc[];
  matrix?: number[];
  m?: Trc[];
  clut?: { points: number[]; precision: 1 | 2; values: number[] };
  a?: Trc[];
}

/** lutAToBType (`mAB `) with the given elements; offsets are filled in. */
export function lutAToBTag({ inputs, b, matrix, m, clut, a }: LutAToB): number[] {
  let body: number[] = [];
  const place = (bytes: number[] | null) => {
    if (!bytes) return 0;
    const offset = 32 + body.length;
    body = body.concat(pad4(bytes));
    return offset;
  };
  const curves = (set: Trc[]) => set.flatMap((t) => pad4(curveTag(t)));
  const bAt = place(curves(b));
  const matrixAt = place(matrix ? matrix.flatMap(s15) : null);
  const mAt = place(m ? curves(m) : null);
  const clutAt = place(
    clut
      ? [...clut.points, ...new Array<number>(16 - clut.points.length).fill(0), clut.precision, 0, 0, 0,
        ...clut.values.flatMap((v) => (clut.precision === 2 ? u16(v) : [v]))]
      : null,
  );
  const aAt = place(a ? curves(a) : null);
  return [...text('mAB '), 0, 0, 0, 0, inputs, 3, 0, 0, ...[bAt, matrixAt, mAt, clutAt, aAt].flatMap(u32), ...body];
}

/** Legacy 16-bit Lab (lut16Type): L* 0..100 -> 0..0xFF00, a* and b* -128..127 -> 0..0xFF00. */
export function legacyLab16([l, a, b]: readonly number[]): number[] {
  return [Math.round((l * 0xff00) / 100), Math.round((a + 128) * 256), Math.round((b + 128) * 256)];
}

/** v4 16-bit Lab: L* 0..100 -> 0..0xFFFF, a* and b* -128..127 -> 0..0xFFFF. */
export function v4Lab16([l, a, b]: readonly number[]): number[] {
  return [Math.round((l * 0xffff) / 100), Math.round(((a + 128) * 0xffff) / 255), Math.round(((b + 128) * 0xffff) / 255)];
}

/**
 * Reference maths for expected values, written out independently of src/image/stages/colour: XYZ D50 ->
 * linear sRGB is Bruce Lindbloom's Bradford-adapted matrix, the sRGB curve is IEC 61966-2-1's.
 */
export const XYZ_D50_TO_LINEAR_SRGB_REFERENCE = [
  3.1338561, -1.6168667, -0.4906146, -0.9787684, 1.9161415, 0.033454, 0.0719453, -0.2289914, 1.4052427,
];

export function srgb8FromLinear(linear: readonly number[]): number[] {
  return linear.map((v) => {
    const clipped = Math.min(Math.max(v, 0), 1);
    return Math.round(255 * (clipped <= 0.0031308 ? 12.92 * clipped : 1.055 * clipped ** (1 / 2.4) - 0.055));
  });
}

export function multiply3(m: readonly number[], v: readonly number[]): number[] {
  return [0, 1, 2].map((r) => m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2]);
}

export function srgb8FromXyzD50(xyz: readonly number[]): number[] {
  return srgb8FromLinear(multiply3(XYZ_D50_TO_LINEAR_SRGB_REFERENCE, xyz));
}

export function srgb8FromLab([l, a, b]: readonly number[]): number[] {
  const fy = (l + 16) / 116;
  const f = (t: number) => (t > 6 / 29 ? t ** 3 : 3 * (6 / 29) ** 2 * (t - 4 / 29));
  return srgb8FromXyzD50([0.9642 * f(fy + a / 500), f(fy), 0.8249 * f(fy - b / 200)]);
}

/** An 8-bit sRGB-curve value as linear light (the sRGB decoding curve). */
export const linearFromSrgb8 = (v: number) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);

/** Published linear-light matrix, Display P3 -> sRGB. */
export const P3_TO_SRGB = [1.2249, -0.2247, 0, -0.042, 1.0419, 0, -0.0196, -0.0786, 1.0982];

/** Channel-wise comparison of 8-bit values within `tolerance` levels. */
export function expectClose(actual: number[], expected: number[], tolerance = 1) {
  for (let i = 0; i < expected.length; i++) {
    expect(Math.abs(actual[i] - expected[i]), `channel ${i}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance);
  }
}

/**
 * What any Display P3 -> sRGB conversion must give for one pixel `convert(rgb, alpha)`: red and
 * green clip, grey and white stay, alpha is kept, mixed colours follow the published matrix.
 */
export function expectDisplayP3ToSrgb(convert: (rgb: number[], alpha?: number) => number[]) {
  expect(convert([255, 0, 0])).toEqual([255, 0, 0, 255]);
  expect(convert([0, 255, 0])).toEqual([0, 255, 0, 255]);
  expect(convert([128, 128, 128])).toEqual([128, 128, 128, 255]);
  expect(convert([255, 255, 255], 17)).toEqual([255, 255, 255, 17]);
  for (const rgb of [[200, 100, 50], [60, 180, 220], [240, 230, 90]]) {
    expectClose(convert(rgb), srgb8FromLinear(multiply3(P3_TO_SRGB, rgb.map(linearFromSrgb8))));
  }
}
