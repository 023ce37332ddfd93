import { clippedSrgbEncoder, srgbDecode, srgbEncode, srgbEncodeTable } from './colour/srgb';
import { SHARPEN_MIN_AMPLITUDE, sharpenKernelBytes, SharpenKernels, type SharpenTables } from './filter-kernels';
import { toByte } from './pixels';
import type { RowSource } from './rows';
import { windowedRows } from './windowed';
import type { Dimensions } from '../types';

/*
 * sharp's sharpen({ sigma }) with its defaults: libvips' vips_sharpen, an unsharp mask on the
 * lightness L* of CIELAB (in libvips' LabS, L * 327.67 as an integer): L blurred with a Gaussian of
 * sigma (minimum amplitude 0.1), and each pixel's L moved by a curve of its difference from the
 * blur: slope m1 = 1 within x1 = 2 L of it, m2 = 2 beyond, the change kept within +y2 = 10 and
 * -y3 = 20. a* and b* stay: the pixel keeps its chroma and hue. As in sharp, a picture with alpha is
 * sharpened premultiplied. The kernels (codecs/kernels/filters.c, filter-kernels.ts) do the work
 * with the tables and arithmetic below; pixels with alpha strictly between 0 and 255 they hand back
 * to labsLightness and withLightness here.
 */

export { SHARPEN_MIN_AMPLITUDE };
const DEFAULTS = { m1: 1, m2: 2, x1: 2, y2: 10, y3: 20 };
export const LABS_SCALE = 32767 / 100;
const BAND_ROWS = 16;

/** vips_sharpen's table: the change of L (LabS units) for each difference from the blur, indexed by difference + 32768 as libvips indexes it. */
export const CHANGE = (() => {
  const { m1, m2, x1, y2, y3 } = DEFAULTS;
  const lut = new Int32Array(65536);
  for (let i = 0; i < 65536; i++) {
    const v = (i - 32767) / 327.67;
    let y = v < -x1 ? (v + x1) * m2 - x1 * m1 : v < x1 ? v * m1 : (v - x1) * m2 + x1 * m1;
    y = Math.min(y2, Math.max(-y3, y));
    lut[i] = Math.round(y * 327.67);
  }
  return lut;
})();

/** Linear sRGB to XYZ relative to the D65 white (X / Xn, Y, Z / Zn), as libvips' scRGB -> XYZ -> Lab. */
const TO_XYZ = [
  [0.4124 / 0.95047, 0.3576 / 0.95047, 0.1805 / 0.95047],
  [0.2126, 0.7152, 0.0722],
  [0.0193 / 1.088827, 0.1192 / 1.088827, 0.9505 / 1.088827],
];
/** XYZ relative to D65 back to linear sRGB. */
const FROM_XYZ = [
  [3.240625 * 0.95047, -1.537208, -0.498629 * 1.088827],
  [-0.968931 * 0.95047, 1.875756, 0.041518 * 1.088827],
  [0.05571 * 0.95047, -0.204021, 1.056996 * 1.088827],
];
const EPSILON = 216 / 24389;
const KAPPA = 24389 / 27;
/** CIELAB's f: cube root above the cut, a line below it. */
const f = (t: number) => (t > EPSILON ? Math.cbrt(t) : (KAPPA * t + 16) / 116);
const fInverse = (v: number) => (v > 6 / 29 ? v * v * v : (116 * v - 16) / KAPPA);

let tables: SharpenTables | undefined;

/** The kernels' tables: linear light, the encode table, and CHANGE where it is not constant. */
function sharpenTables(): SharpenTables {
  if (!tables) {
    let from = 0;
    while (CHANGE[from + 1] === CHANGE[0]) from++;
    let to = CHANGE.length - 1;
    while (CHANGE[to - 1] === CHANGE[CHANGE.length - 1]) to--;
    tables = { linear: LINEAR, encode: srgbEncodeTable(), change: CHANGE.slice(from, to + 1), changeFrom: from };
  }
  return tables;
}

/** Bytes the sharpen stage holds for a picture of `size` (memory-plan.ts): the kernels' memory, with the Gaussian, each held row's pixels and L*, and the output band. */
export function sharpenBytes(size: Dimensions, sigma: number): number {
  return sharpenKernelBytes(size.width, size.height, sigma, BAND_ROWS, sharpenTables());
}

/** The sharpen stage: `source` sharpened as sharp's sharpen({ sigma }), in bands, holding a window of rows. */
export function sharpenRows(source: RowSource, sigma: number): RowSource {
  const { width, height } = source;
  const encode = clippedSrgbEncoder();
  const kernels = new SharpenKernels(width, height, sigma, BAND_ROWS, sharpenTables(), labsLightness, (pixel, change) => withLightness(pixel, change / LABS_SCALE, encode));
  return windowedRows(source, 'sharpen', kernels, BAND_ROWS, sharpenBytes({ width, height }, sigma));
}

/** Linear light of each 8-bit sRGB value. */
const LINEAR = Float64Array.from({ length: 256 }, (_, v) => srgbDecode(v / 255));

/** One channel of a pixel as linear light, premultiplied by alpha `a` as sharp sharpens (on the encoded value). */
const linear = (value: number, a: number) => (a === 255 ? LINEAR[value] : srgbDecode((value * a) / 65025));

/** L* of a pixel in LabS units (L * 327.67, truncated as libvips stores it). */
export function labsLightness(px: number): number {
  const a = px >>> 24;
  const y = Y_ROW[0] * linear(px & 255, a) + Y_ROW[1] * linear((px >> 8) & 255, a) + Y_ROW[2] * linear((px >> 16) & 255, a);
  return Math.trunc((116 * f(y) - 16) * LABS_SCALE);
}

const [X_ROW, Y_ROW, Z_ROW] = TO_XYZ;
const [R_ROW, G_ROW, B_ROW] = FROM_XYZ;

/** The pixel with its L* moved by `change`, a* and b* kept: each of f(X), f(Y), f(Z) moves by change / 116. */
export function withLightness(px: number, change: number, encode: (linear: number) => number): number {
  const a = px >>> 24;
  const r = linear(px & 255, a);
  const g = linear((px >> 8) & 255, a);
  const b = linear((px >> 16) & 255, a);
  const shift = change / 116;
  const X = fInverse(f(X_ROW[0] * r + X_ROW[1] * g + X_ROW[2] * b) + shift);
  const Y = fInverse(f(Y_ROW[0] * r + Y_ROW[1] * g + Y_ROW[2] * b) + shift);
  const Z = fInverse(f(Z_ROW[0] * r + Z_ROW[1] * g + Z_ROW[2] * b) + shift);
  const red = R_ROW[0] * X + R_ROW[1] * Y + R_ROW[2] * Z;
  const green = G_ROW[0] * X + G_ROW[1] * Y + G_ROW[2] * Z;
  const blue = B_ROW[0] * X + B_ROW[1] * Y + B_ROW[2] * Z;
  if (a === 255) return encode(red) | (encode(green) << 8) | (encode(blue) << 16) | (a << 24);
  // Un-premultiplied on the encoded values, as sharp does after sharpening.
  const straight = (value: number) => (a === 0 ? 0 : toByte((255 * 255 * srgbEncode(Math.min(1, Math.max(0, value)))) / a));
  return straight(red) | (straight(green) << 8) | (straight(blue) << 16) | (a << 24);
}
