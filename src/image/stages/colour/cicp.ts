import type { Primaries } from './colorimetry';
import { d50Colorants } from './colorimetry';
import { clip, type Curve, identity } from './icc-curve';
import { isSrgbMatrixShaper, type MatrixShaper, matrixShaperConverter, type PixelConverter } from './matrix-shaper';
import { srgbDecode } from './srgb';

/**
 * Colour described by code points (ITU-T H.273 "CICP") instead of an ICC profile: AVIF's `colr`
 * box of type `nclx` and PNG's `cICP` chunk. Only the primaries and the transfer characteristics
 * matter here: the decoder has already turned YUV into RGB with the matrix coefficients and the
 * range, but the RGB it returns is still in the file's primaries and transfer.
 */
export interface Cicp {
  primaries: number;
  transfer: number;
}

const D65 = [0.3127, 0.329] as const;
const ILLUMINANT_C = [0.31, 0.316] as const;

/** H.273 table 2: colour_primaries -> chromaticities (the ones with RGB primaries; 10, XYZ, is not one). */
const PRIMARIES: Record<number, Primaries> = {
  1: { red: [0.64, 0.33], green: [0.3, 0.6], blue: [0.15, 0.06], white: D65 }, // BT.709, sRGB
  4: { red: [0.67, 0.33], green: [0.21, 0.71], blue: [0.14, 0.08], white: ILLUMINANT_C }, // BT.470 System M
  5: { red: [0.64, 0.33], green: [0.29, 0.6], blue: [0.15, 0.06], white: D65 }, // BT.470 B/G, BT.601 625
  6: { red: [0.63, 0.34], green: [0.31, 0.595], blue: [0.155, 0.07], white: D65 }, // BT.601 525, SMPTE 170M
  7: { red: [0.63, 0.34], green: [0.31, 0.595], blue: [0.155, 0.07], white: D65 }, // SMPTE 240M
  8: { red: [0.681, 0.319], green: [0.243, 0.692], blue: [0.145, 0.049], white: ILLUMINANT_C }, // generic film
  9: { red: [0.708, 0.292], green: [0.17, 0.797], blue: [0.131, 0.046], white: D65 }, // BT.2020, BT.2100
  11: { red: [0.68, 0.32], green: [0.265, 0.69], blue: [0.15, 0.06], white: [0.314, 0.351] }, // DCI-P3 (SMPTE RP 431-2)
  12: { red: [0.68, 0.32], green: [0.265, 0.69], blue: [0.15, 0.06], white: D65 }, // Display P3 (SMPTE EG 432-1)
  22: { red: [0.63, 0.34], green: [0.295, 0.605], blue: [0.155, 0.077], white: D65 }, // EBU Tech 3213-E
};
/** colour_primaries 2: unspecified, read as BT.709/sRGB like every decoder and browser does. */
const UNSPECIFIED = 2;

const srgbCurve: Curve = (x) => srgbDecode(clip(x));
const gamma = (g: number): Curve => (x) => clip(x) ** g;

/**
 * H.273 table 3: transfer_characteristics -> encoded to linear. The BT.709-family OETFs (1 BT.709,
 * 6 BT.601, 14 and 15 BT.2020 10/12-bit) are camera curves without a defined display inverse;
 * browsers display them with the sRGB curve (Chrome and Firefox treat such images like sRGB), so
 * they are read as sRGB here too and a BT.709 file is left as it is. 2 (unspecified) is sRGB as well.
 */
const TRANSFERS: Record<number, Curve> = {
  1: srgbCurve,
  2: srgbCurve,
  4: gamma(2.2), // BT.470 System M
  5: gamma(2.8), // BT.470 System B/G
  6: srgbCurve,
  8: identity, // linear
  13: srgbCurve, // IEC 61966-2-1 sRGB
  14: srgbCurve,
  15: srgbCurve,
};

/**
 * PQ (16, SMPTE ST 2084) and HLG (18, ARIB STD-B67) are HDR: showing them on an sRGB output needs
 * tone mapping, which is not done; such pixels are left as they are (most viewers without HDR
 * support show them the same way: dim and washed out).
 */
export const HDR_TRANSFERS: ReadonlySet<number> = new Set([16, 18]);

/** True when the values can be converted or knowingly left alone (sRGB, HDR); false for unknown code points. */
export function understoodCicp({ primaries, transfer }: Cicp): boolean {
  if (HDR_TRANSFERS.has(transfer)) return true;
  return (primaries === UNSPECIFIED || primaries in PRIMARIES) && transfer in TRANSFERS;
}

/**
 * The conversion to sRGB (one 3x3 matrix between per-channel tables, as for a matrix/TRC ICC
 * profile), or null to leave the pixels alone: already sRGB (BT.709 or unspecified primaries with
 * an sRGB-like transfer), HDR, or code points that are reserved or not supported.
 */
export function cicpConversion({ primaries, transfer }: Cicp): PixelConverter | null {
  if (HDR_TRANSFERS.has(transfer)) return null;
  const chromaticities = PRIMARIES[primaries === UNSPECIFIED ? 1 : primaries];
  const curve = TRANSFERS[transfer];
  if (!chromaticities || !curve) return null;
  const shaper: MatrixShaper = { colorants: d50Colorants(chromaticities), curves: [curve, curve, curve] };
  if (isSrgbMatrixShaper(shaper)) return null;
  return matrixShaperConverter(shaper);
}
