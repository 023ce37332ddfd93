import { fromColumns, type Mat3, multiply } from './colorimetry';
import { type Curve, readCurveTag, sample256 } from './icc-curve';
import { type IccProfile, readXyzTag } from './icc';
import { clippedSrgbEncoder, SRGB_D50, srgbEncode, XYZ_D50_TO_LINEAR_SRGB } from './srgb';

/** In-place conversion of RGBA bytes (alpha untouched). */
export type PixelConverter = (data: Uint8Array | Uint8ClampedArray) => void;

/** An RGB matrix/TRC profile: per-channel curves to linear, then colorants (columns) to XYZ D50. */
export interface MatrixShaper {
  colorants: Mat3;
  curves: [Curve, Curve, Curve];
}

/** Colorants this close to sRGB's count as sRGB (s15Fixed16 rounding and D65 vs D50 whites differ by less). */
const COLORANT_TOLERANCE = 0.002;
/** A TRC within half a level of the sRGB curve at every 8-bit input counts as sRGB. */
const CURVE_TOLERANCE = 0.5;

/** The matrix/TRC tags of an RGB profile with an XYZ PCS, or null when any is missing. Throws `damaged` if malformed. */
export function readMatrixShaper(profile: IccProfile): MatrixShaper | null {
  if (profile.pcs !== 'XYZ ') return null;
  const [red, green, blue] = ['rXYZ', 'gXYZ', 'bXYZ'].map((s) => readXyzTag(profile, s));
  const curves = ['rTRC', 'gTRC', 'bTRC'].map((s) => readCurveTag(profile.tags, s));
  if (!red || !green || !blue || !curves[0] || !curves[1] || !curves[2]) return null;
  return { colorants: fromColumns(red, green, blue), curves: [curves[0], curves[1], curves[2]] };
}

/** True when converting would change nothing visible: sRGB colorants and sRGB curves. */
export function isSrgbMatrixShaper({ colorants, curves }: MatrixShaper): boolean {
  return colorants.every((v, i) => Math.abs(v - SRGB_D50[i]) <= COLORANT_TOLERANCE) && curves.every(isSrgbCurve);
}

/** True when the curve, read as device -> linear, re-encodes to within half a level of the input. */
export function isSrgbCurve(curve: Curve): boolean {
  const linear = sample256(curve);
  return linear.every((value, i) => Math.abs(255 * srgbEncode(value) - i) <= CURVE_TOLERANCE);
}

/**
 * Linearise each channel through a 256-entry table, one matrix (profile colorants -> XYZ D50 ->
 * linear sRGB), clip, and encode through the sRGB table.
 */
export function matrixShaperConverter({ colorants, curves }: MatrixShaper): PixelConverter | null {
  const m = multiply(XYZ_D50_TO_LINEAR_SRGB, colorants);
  if (!m.every(Number.isFinite)) return null;
  const [red, green, blue] = curves.map(sample256);
  const encode = clippedSrgbEncoder();
  const [m0, m1, m2, m3, m4, m5, m6, m7, m8] = m;
  return (data) => {
    for (let i = 0; i < data.length; i += 4) {
      const r = red[data[i]];
      const g = green[data[i + 1]];
      const b = blue[data[i + 2]];
      data[i] = encode(m0 * r + m1 * g + m2 * b);
      data[i + 1] = encode(m3 * r + m4 * g + m5 * b);
      data[i + 2] = encode(m6 * r + m7 * g + m8 * b);
    }
  };
}

/**
 * A grey profile's kTRC: device grey -> Y (XYZ PCS) or L* / 100 (Lab PCS), a neutral that becomes
 * sRGB grey. Returns the 256-entry grey table, 'srgb' when the curve is already sRGB's, or null
 * without a kTRC.
 */
export function greyTable(profile: IccProfile): Uint8Array | null | 'srgb' {
  const curve = readCurveTag(profile.tags, 'kTRC');
  if (!curve) return null;
  const toLuminance: Curve = profile.pcs === 'XYZ ' ? curve : (x) => lightnessToY(100 * curve(x));
  if (isSrgbCurve(toLuminance)) return 'srgb';
  return Uint8Array.from(sample256(toLuminance), clippedSrgbEncoder());
}

function lightnessToY(lightness: number): number {
  const fy = (lightness + 16) / 116;
  return fy > 6 / 29 ? fy ** 3 : 3 * (6 / 29) ** 2 * (fy - 4 / 29);
}

/** Applies a 256-entry table to R, G and B. */
export function perChannelConverter(table: Uint8Array): PixelConverter {
  return (data) => {
    for (let i = 0; i < data.length; i += 4) {
      data[i] = table[data[i]];
      data[i + 1] = table[data[i + 1]];
      data[i + 2] = table[data[i + 2]];
    }
  };
}
