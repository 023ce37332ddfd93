import { planAvifLayout } from './encode-layout';

/**
 * What `avifEncoder` holds for a width x height result, as measured upper bounds for the memory
 * plan (bytes). Measured with jSquash's encoder on white noise (the largest output) and on photos.
 */

const MiB = 2 ** 20;

/**
 * The encoder instance's WebAssembly memory. It starts at 16 MiB and no tile of at most 512 x 512
 * (alpha included) grew it. A single item (at most 512 x 512 pixels) grows with its longer side:
 * 4096 x 64 took 19.25 MiB, 8000 x 32 23.1 MiB, 12000 x 21 27.75 MiB.
 */
export function avifEncoderWasmBytes(width: number, height: number): number {
  const { columns, rows } = planAvifLayout(width, height);
  if (columns * rows > 1) return 16 * MiB;
  return Math.max(16 * MiB, 15 * MiB + 1126 * Math.max(width, height));
}

/**
 * JavaScript buffers while encoding: one row of tiles (tileHeight rows of the padded width, RGBA),
 * the tile being encoded, and the encoder's file for that tile with the AV1 data cut from it.
 */
export function avifEncoderBufferBytes(width: number, height: number, alpha: boolean): number {
  const { columns, tileWidth, tileHeight } = planAvifLayout(width, height);
  const tilePixels = tileWidth * tileHeight;
  return tileHeight * columns * tileWidth * 4 + tilePixels * 4 + 2 * avifEncodedBytes(tileWidth, tileHeight, alpha);
}

/**
 * The file's size at most, at any quality: white noise at quality 100 took 1.85 bytes a pixel for
 * colour and 3.17 with alpha (quality 80: 0.87 and 1.58; photos at quality 80: about 0.16).
 */
export function avifEncodedBytes(width: number, height: number, alpha: boolean): number {
  return Math.ceil(width * height * (alpha ? 3.25 : 1.9)) + 64 * 1024;
}

/**
 * The most the encoder holds at once: its instance and buffers, and at the end the encoded tiles
 * beside the file they are copied into.
 */
export function avifEncoderPeakBytes(width: number, height: number, alpha: boolean): number {
  return avifEncoderWasmBytes(width, height) + avifEncoderBufferBytes(width, height, alpha) + 2 * avifEncodedBytes(width, height, alpha);
}
