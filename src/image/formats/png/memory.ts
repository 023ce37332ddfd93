import { PNG_BAND_ROWS } from './decode';
import { pngFileBound } from './encode';
import { IDAT_BYTES } from './png-file';
import { PIECE_BYTES, READ_BYTES } from './inflate';
import { passes, rowBytes, type PixelLayout } from './structure';

/*
 * What the PNG codec holds, as upper bounds for the memory plan. JavaScript buffers are counted
 * exactly from the code; what the runtime's zlib holds outside JavaScript was measured from
 * workerd's RSS (bench/png-codec.ts, README of src/image/formats/png): per DecompressionStream its inflate
 * state and window, the 16 KiB output buffer and the output queue, which holds at most one
 * piece's output; per CompressionStream deflate's window, hash chains and pending buffer.
 */

const KIB = 1024;


/** JavaScript bytes a decode holds at most: the band, and per pass two rows, the read buffer and a joined piece. */
export function pngDecodeHeldBytes(png: PixelLayout, regionWidth: number, bandRows = PNG_BAND_ROWS): number {
  let bytes = Math.min(bandRows, png.height) * regionWidth * 4;
  for (const pass of passes(png)) {
    if (pass.width === 0 || pass.height === 0) continue;
    bytes += 2 * (1 + rowBytes(png, pass.width)) + READ_BYTES + PIECE_BYTES;
  }
  return bytes;
}

/** Bytes one DecompressionStream holds inside the runtime at most (measured; see above). */
export const INFLATER_NATIVE_BYTES = 64 * KIB + 2 * PIECE_BYTES * 1032;

/** Bytes the runtime's zlib holds for a decode: one inflater, or one per non-empty Adam7 pass. */
export function pngDecodeNativeBytes(png: PixelLayout): number {
  const inflaters = passes(png).filter((pass) => pass.width > 0 && pass.height > 0).length;
  return inflaters * INFLATER_NATIVE_BYTES;
}

/** All a decode holds: JavaScript buffers and the runtime's zlib. */
export function pngDecodeBytes(png: PixelLayout, regionWidth = png.width, bandRows = PNG_BAND_ROWS): number {
  return pngDecodeHeldBytes(png, regionWidth, bandRows) + pngDecodeNativeBytes(png);
}

/** Bytes one CompressionStream holds inside the runtime at most (measured; deflate level 6 allocates ~268 KiB). */
export const DEFLATER_NATIVE_BYTES = 512 * KIB;

/** Channels of the encoder's output for a source's traits (encoder.ts picks the colour type). */
export function pngOutputChannels(alpha: boolean, grey: boolean): number {
  return grey ? (alpha ? 2 : 1) : alpha ? 4 : 3;
}

/**
 * All an encode holds besides its source and its file: two packed rows, the 64 KiB batch and the
 * stream's copy of it, the 64 KiB read buffer and one IDAT chunk, the runtime's deflate.
 */
export function pngEncodeBytes(width: number, height: number, channels: number): number {
  const row = width * channels;
  const batch = Math.max(64 * KIB, 1 + row);
  return 2 * row + 2 * batch + 64 * KIB + (12 + IDAT_BYTES) + DEFLATER_NATIVE_BYTES;
}

/**
 * Most file bytes the encoder writes between two drains: what deflate gives out for one batch
 * (at worst the batch, stored) plus what it had kept back (its window and pending output, below
 * the native bytes it allocates), and at the end its final flush.
 */
export const PNG_BURST_BYTES = 2 * DEFLATER_NATIVE_BYTES;
