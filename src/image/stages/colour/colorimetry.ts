/**
 * Colour science shared by the transforms: 3x3 matrices (row-major), Bradford chromatic adaptation,
 * CIELAB, and the ICC profile connection space white (D50).
 */

export type Vec3 = [number, number, number];
/** Row-major 3x3 matrix. */
export type Mat3 = [number, number, number, number, number, number, number, number, number];
/** CIE xy chromaticity. */
export type Chromaticity = readonly [number, number];

/** The PCS illuminant as the ICC specification encodes it (X, Y, Z). */
export const D50: Vec3 = [0.9642, 1, 0.8249];

export function multiply(a: Mat3, b: Mat3): Mat3 {
  const out = new Array<number>(9);
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 3; col++) {
      out[row * 3 + col] = a[row * 3] * b[col] + a[row * 3 + 1] * b[3 + col] + a[row * 3 + 2] * b[6 + col];
    }
  }
  return out as Mat3;
}

export function apply(m: Mat3, v: ArrayLike<number>): Vec3 {
  return [
    m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
    m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
    m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
  ];
}

/** The inverse, or null for a (nearly) singular matrix. */
export function invert(m: Mat3): Mat3 | null {
  const [a, b, c, d, e, f, g, h, i] = m;
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  if (!Number.isFinite(det) || Math.abs(det) < 1e-12) return null;
  return [
    (e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
    (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
    (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det,
  ];
}

/** The matrix whose columns are the three given vectors. */
export function fromColumns(x: Vec3, y: Vec3, z: Vec3): Mat3 {
  return [x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]];
}

/** XYZ with Y = 1 of a chromaticity. */
export function xyToXyz([x, y]: Chromaticity): Vec3 {
  return [x / y, 1, (1 - x - y) / y];
}

const BRADFORD: Mat3 = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296];
const BRADFORD_INVERSE = invert(BRADFORD)!;

/** Bradford chromatic adaptation from one white to another (what lcms and the ICC `chad` tag use). */
export function bradford(from: Vec3, to: Vec3): Mat3 {
  const [fromL, fromM, fromS] = apply(BRADFORD, from);
  const [toL, toM, toS] = apply(BRADFORD, to);
  const scale: Mat3 = [toL / fromL, 0, 0, 0, toM / fromM, 0, 0, 0, toS / fromS];
  return multiply(BRADFORD_INVERSE, multiply(scale, BRADFORD));
}

export interface Primaries {
  red: Chromaticity;
  green: Chromaticity;
  blue: Chromaticity;
  white: Chromaticity;
}

/**
 * Linear RGB -> XYZ D50 (columns: the colorants an ICC profile stores as rXYZ/gXYZ/bXYZ):
 * the RGB -> XYZ matrix of the primaries under their own white, then Bradford-adapted to D50.
 */
export function d50Colorants({ red, green, blue, white }: Primaries): Mat3 {
  const unscaled = fromColumns(xyToXyz(red), xyToXyz(green), xyToXyz(blue));
  const whiteXyz = xyToXyz(white);
  const [sr, sg, sb] = apply(invert(unscaled)!, whiteXyz);
  const toXyz = multiply(unscaled, [sr, 0, 0, 0, sg, 0, 0, 0, sb]);
  return multiply(bradford(whiteXyz, D50), toXyz);
}

/** CIELAB (relative to D50) -> XYZ D50. */
export function labToXyz(l: number, a: number, b: number): Vec3 {
  const fy = (l + 16) / 116;
  const inverse = (t: number) => (t > 6 / 29 ? t * t * t : 3 * (6 / 29) ** 2 * (t - 4 / 29));
  return [D50[0] * inverse(fy + a / 500), inverse(fy), D50[2] * inverse(fy - b / 200)];
}
