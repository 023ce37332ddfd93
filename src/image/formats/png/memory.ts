import { PNG_BAND_ROWS } from './decode';
import { DEFAULT_PNG_ENCODE, DEFLATE_PIECE_BYTES, IDAT_BYTES, PNG_ENCODE_BAND_ROWS, pngFileBound } from './encode';
import { passes, rowBytes, type PixelLayout } from './structure';

/*
 * What the PNG codec holds, as upper bounds for the memory plan: the WebAssembly memory of its
 * zlib and libdeflate build (codecs/png), which starts at 256 KiB and grows by what decoder.c and
 * encoder.c allocate, counted from the code (zlib's inflate state from inflate.c; libdeflate's
 * compressor measured in the module), plus a page for the allocator's headers and the page the
 * last allocation ends in.
 */

const KIB = 1024;

/** The module's memory before any allocation (codecs/png/build.sh, -sINITIAL_MEMORY) and the allocator's slack. */
const WASM_BASE_BYTES = 256 * KIB + 64 * KIB;
/**
 * inflate's state (9,040 bytes in Chromium's zlib: its 10-bit root table needs more room for code
 * tables) and its 32 KiB window with 16 bytes for chunk copies, and the 64 KiB of compressed input
 * a stream reads at once.
 */
const INFLATE_STREAM_BYTES = 42 * KIB + 64 * KIB;
/** decoder.c's room after each row for SIMD loads, and what the allocator adds to a block at most. */
const ROW_PADDING = 16;
const ALLOCATION_HEADER = 16;
/**
 * libdeflate's compressor, measured in the module (encoder_create's growth less what encoder.c
 * allocates beside it): 199 KiB at level 1 (a hash table), 655 KiB at levels 2-9 (hash chains).
 */
const COMPRESSOR_BYTES = (level: number) => (level <= 0 ? 0 : level === 1 ? 204 : 660) * KIB;
/** encoder.c's piece of filtered rows and its compressed form (libdeflate's bound: 5 bytes per 5,000, and 17). */
const PIECE_BYTES = DEFLATE_PIECE_BYTES;
const PACKED_BYTES = PIECE_BYTES + 5 * Math.ceil(PIECE_BYTES / 5000) + 17;

/** decoder.c's batch of rows inflated at once: as many as fit in 128 KiB, at least one, at most the pass's. */
const BATCH_BYTES = 128 * KIB;

/**
 * All a decode holds: the band, and per non-empty pass (one, or up to seven with Adam7) an inflate
 * stream, a batch of rows and the row before it.
 */
export function pngDecodeBytes(png: PixelLayout, regionWidth = png.width, bandRows = PNG_BAND_ROWS): number {
  let bytes = WASM_BASE_BYTES + Math.min(bandRows, png.height) * regionWidth * 4;
  for (const pass of passes(png)) {
    if (pass.width === 0 || pass.height === 0) continue;
    const stride = 1 + rowBytes(png, pass.width);
    const batchRows = Math.min(Math.max(1, Math.floor(BATCH_BYTES / stride)), pass.height);
    bytes += INFLATE_STREAM_BYTES + batchRows * stride + stride + 2 * (ROW_PADDING + ALLOCATION_HEADER);
  }
  return bytes;
}

/** Channels of the encoder's output for a source's traits (encoder.ts picks the colour type). */
export function pngOutputChannels(alpha: boolean, grey: boolean): number {
  return grey ? (alpha ? 2 : 1) : alpha ? 4 : 3;
}

/**
 * All an encode holds besides its source and its file: libdeflate's compressors (at `level` and
 * at `graphicLevel`), a piece of
 * filtered rows and its compressed form, two packed rows and five filtered ones, one band of RGBA
 * rows and one IDAT chunk in the WebAssembly memory.
 */
export function pngEncodeBytes(width: number, height: number, channels: number, { level, graphicLevel } = DEFAULT_PNG_ENCODE): number {
  const row = 1 + width * channels + ALLOCATION_HEADER;
  const deflate = COMPRESSOR_BYTES(level) + COMPRESSOR_BYTES(graphicLevel) + PIECE_BYTES + PACKED_BYTES + 4 * ALLOCATION_HEADER;
  return WASM_BASE_BYTES + deflate + 7 * row + Math.min(PNG_ENCODE_BAND_ROWS, height) * width * 4 + ALLOCATION_HEADER + (12 + IDAT_BYTES);
}

/**
 * Most bytes the encoder writes between two drains (one per band): a band's filtered rows and the
 * piece kept back before it, stored at worst (libdeflate's bound), framed as IDAT chunks.
 */
export function pngWriteBurstBytes(width: number, channels: number): number {
  const filtered = PNG_ENCODE_BAND_ROWS * (1 + width * channels) + PIECE_BYTES;
  const data = filtered + 5 * Math.ceil(filtered / 5000) + 17 * Math.ceil(filtered / PIECE_BYTES);
  return data + 12 * Math.ceil(data / IDAT_BYTES) + 64;
}
