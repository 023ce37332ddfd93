/** Image formats the service reads and writes. `jpeg` is written with the `jpg` extension. */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'avif';

/** Decoded pixels: 8-bit RGBA, row-major, no padding (length = width * height * 4). */
export interface RgbaImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

/**
 * Decoded CMYK (a 4-component JPEG): ink amounts, 0 = no ink, 255 = full ink, 4 bytes per pixel
 * (C, M, Y, K). Adobe's inverted storage is already undone. Converted to sRGB by `color/`.
 */
export interface CmykImage {
  colorModel: 'cmyk';
  data: Uint8Array;
  width: number;
  height: number;
}

/** What a codec's decoder returns: RGBA, or CMYK that still needs converting to RGB. */
export type DecodedImage = RgbaImage | CmykImage;

export function isCmyk(image: DecodedImage): image is CmykImage {
  return 'colorModel' in image && image.colorModel === 'cmyk';
}

export interface Dimensions {
  width: number;
  height: number;
}
