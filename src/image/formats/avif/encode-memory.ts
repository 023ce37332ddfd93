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
export function avifEncoderBufferBytes(width: number, height: number, alpha: boolean, quality: number): number {
  const { columns, tileWidth, tileHeight } = planAvifLayout(width, height);
  return tileHeight * columns * tileWidth * 4 + tileWidth * tileHeight * 4 + 2 * avifEncodedBytes(tileWidth, tileHeight, alpha, quality);
}

/**
 * Bytes a pixel at most, measured on white noise (the largest output): colour, and what alpha adds.
 * Photos at quality 80 take about 0.16.
 */
const BYTES_PER_PIXEL = [
  { upToQuality: 80, color: 1.0, alpha: 0.75 }, // noise: 0.87 (0.97 for 12000 x 21), with alpha 1.58
  { upToQuality: 85, color: 1.1, alpha: 0.85 }, // 0.97, with alpha 1.75
  { upToQuality: 90, color: 1.2, alpha: 0.95 }, // 1.08 (1.17 for 12000 x 21), with alpha 1.97
  { upToQuality: 95, color: 1.4, alpha: 1.1 }, // 1.28 (1.38 for 12000 x 21), with alpha 2.34
  { upToQuality: 100, color: 1.9, alpha: 1.35 }, // 1.85, with alpha 3.17
];

/** The file's size at most for `quality` (1..100), with 64 KiB for the boxes of up to 24 x 24 tiles twice over. */
export function avifEncodedBytes(width: number, height: number, alpha: boolean, quality: number): number {
  const step = BYTES_PER_PIXEL.find((candidate) => quality <= candidate.upToQuality) ?? BYTES_PER_PIXEL[BYTES_PER_PIXEL.length - 1];
  return Math.ceil(width * height * (step.color + (alpha ? step.alpha : 0))) + 64 * 1024;
}

/**
 * The most the encoder holds at once: its instance and buffers, and at the end the encoded tiles
 * beside the file they are copied into.
 */
export function avifEncoderPeakBytes(width: number, height: number, alpha: boolean, quality: number): number {
  return avifEncoderWasmBytes(width, height) + avifEncoderBufferBytes(width, height, alpha, quality) + 2 * avifEncodedBytes(width, height, alpha, quality);
}
