/** Image formats the service reads and writes. `jpeg` is written with the `jpg` extension. */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'avif';

/** Decoded pixels: 8-bit RGBA, row-major, no padding (length = width * height * 4). */
export interface RgbaImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

export interface Dimensions {
  width: number;
  height: number;
}
