import { d50Colorants, invert, type Mat3, type Primaries } from './colorimetry';

/** sRGB (IEC 61966-2-1) primaries and D65 white, as lcms builds its sRGB profile. */
export const SRGB_PRIMARIES: Primaries = { red: [0.64, 0.33], green: [0.3, 0.6], blue: [0.15, 0.06], white: [0.3127, 0.329] };

/** Linear sRGB -> XYZ D50: the colorants of an sRGB ICC profile. */
export const SRGB_D50 = d50Colorants(SRGB_PRIMARIES);

/** XYZ D50 -> linear sRGB (relative colorimetric: the PCS white D50 becomes sRGB white). */
export const XYZ_D50_TO_LINEAR_SRGB: Mat3 = invert(SRGB_D50)!;

/** sRGB transfer function: encoded 0..1 -> linear 0..1. */
export function srgbDecode(v: number): number {
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}

/** sRGB transfer function: linear 0..1 -> encoded 0..1. */
export function srgbEncode(v: number): number {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055;
}

/** Steps of ENCODE_TABLE: fine enough that the steep part near black stays within 0.1 of a level. */
export const ENCODE_STEPS = 16384;

let encodeTable: Uint8Array | undefined;

/** Linear 0..1 in ENCODE_STEPS steps -> rounded 8-bit sRGB. Index with `(linear * ENCODE_STEPS + 0.5) | 0`. */
export function srgbEncodeTable(): Uint8Array {
  if (!encodeTable) {
    encodeTable = new Uint8Array(ENCODE_STEPS + 1);
    for (let i = 0; i <= ENCODE_STEPS; i++) encodeTable[i] = Math.round(255 * srgbEncode(i / ENCODE_STEPS));
  }
  return encodeTable;
}

/** Linear sRGB -> encoded 0..255 (unrounded), clipped to the gamut. */
export function encodeTo255(linear: number): number {
  return linear <= 0 ? 0 : linear >= 1 ? 255 : 255 * srgbEncode(linear);
}

/** Linear sRGB -> 8-bit sRGB through the encode table, clipped to the gamut. */
export function clippedSrgbEncoder(): (linear: number) => number {
  const table = srgbEncodeTable();
  return (linear) => (linear <= 0 ? 0 : linear >= 1 ? 255 : table[(linear * ENCODE_STEPS + 0.5) | 0]);
}
