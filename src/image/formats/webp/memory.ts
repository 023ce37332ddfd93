import type { WebpStream } from './header';

/**
 * What the libwebp codec (decode.ts, encode.ts) costs in WebAssembly memory, as
 * upper bounds from the header alone. The `*LimitBytes` figures are given to the instance as the
 * most libwebp may allocate (codecs/webp/memory.c), so no file can make it take more: a request
 * past the limit fails with CONVERSION_FAILED (FILE_TOO_LARGE when the encoder's VP8 data outgrew its
 * room). The `*WasmBytes` figures add what lies below the
 * heap (static data, 256 KB of stack) and malloc's own slack, and bound the memory the instance
 * grows to, which is what codecs/wasm-memory.ts measures. Figures were measured with the test
 * photos at 1, 4, 12, 24 and 48 MP (memory.test.ts and test/workers/full-size.test.ts check them on
 * real runs).
 */

const MiB = 1024 * 1024;

/** Rows per band the decoder hands out and the encoder imports at most (the pipeline's BAND_ROWS_MAX). */
export const WEBP_BAND_ROWS = 16;
const ENCODER_BAND_ROWS_MAX = 64;
/** Static data and stack below the heap (about 0.3 MB), malloc's chunk headers and slack. */
const BELOW_HEAP_AND_SLACK = MiB;
/** WebAssembly memory grows in 64 KiB pages from the 1 MiB it starts with. */
const WASM_PAGE = 64 * 1024;
const WASM_INITIAL = MiB;
/** libwebp's allocations that do not grow with the image: decoder and encoder state, tables. */
const FIXED = 256 * 1024;

function wasmBytes(limit: number): number {
  return Math.max(WASM_INITIAL, Math.ceil((limit + BELOW_HEAP_AND_SLACK) / WASM_PAGE) * WASM_PAGE);
}

/**
 * Huffman tables of a lossless stream (the image's, or an ALPH chunk's): about 12-20 KB per group of
 * codes. libwebp's encoder clusters to a few dozen groups (1 MB for a 12 MP photo); the format
 * allows 65,536, which a small file can ask for, so the allowance is what legitimate files need.
 */
function huffmanTablesBytes(pixels: number): number {
  return 2 * MiB + pixels / 4;
}

/**
 * A VP8L image in libwebp's decoder: its ARGB pixels (4 bytes each) and, for the transforms and
 * the meta-Huffman image, sub-images of at most a quarter of the pixels each (predictor, colour
 * and entropy images at their smallest block size of 4x4: 3 x 4 bytes / 16 pixels).
 */
function losslessImageBytes(width: number, height: number): number {
  const pixels = width * height;
  const argbCacheRows = 16 + 1; // NUM_ARGB_CACHE_ROWS plus the top row, at the final width
  return 4 * pixels + 0.75 * pixels + argbCacheRows * 4 * width + huffmanTablesBytes(pixels);
}

/**
 * The image a band decode of a VP8L file holds (codecs/webp/lossless_rows.c): its ARGB pixels are a
 * ring of twice the history a back-reference can reach (2^20 pixels and 7 rows) and 40 rows, where
 * that is less than the image; the sub-images and tables as above.
 */
function losslessRowsBytes(width: number, height: number): number {
  const pixels = width * height;
  const ring = 2 * (2 ** 20 + 7 * width + 8) + 40 * width + 4 * 4096;
  return losslessImageBytes(width, height) - 4 * Math.max(0, pixels - ring);
}

/** Most rows one lossy decoding step hands out (LOSSY_ROWS_PER_STEP in codecs/webp/decoder.c). */
const LOSSY_ROWS_PER_STEP = 25;
/**
 * libwebp's lossy decoder per pixel of width (frame_dec.c AllocateMemory: macroblock state, the
 * 16 + 8 filter rows of YUV cache, intra modes; io_dec.c's upsampler rows): measured 227 bytes.
 */
const LOSSY_BYTES_PER_COLUMN = 240;

/** The most libwebp may allocate to decode `stream` in bands of `bandRows` (the instance's limit). */
export function webpDecoderLimitBytes(stream: WebpStream, bandRows: number): number {
  const { width, height, inputBytes } = stream;
  if (stream.lossless) return FIXED + inputBytes + losslessRowsBytes(width, height) + Math.min(bandRows, height) * 4 * width;
  // An ALPH chunk: libwebp's alpha plane (1 byte a pixel) and the lossless decoder of the plane
  // (1 byte a pixel for a palette-only stream, 4 otherwise: the bound).
  const alpha = stream.alpha ? width * height + losslessImageBytes(width, height) : 0;
  return FIXED + inputBytes + (LOSSY_BYTES_PER_COLUMN + LOSSY_ROWS_PER_STEP * 4) * width + alpha;
}

/** The WebAssembly memory a band decode of `stream` grows to at most. */
export function webpDecoderWasmBytes(stream: WebpStream, bandRows = WEBP_BAND_ROWS): number {
  return wasmBytes(webpDecoderLimitBytes(stream, bandRows));
}

/** How the encoder runs libwebp for a picture (WebPConfig fields). */
export interface WebpEncoderSettings {
  /** 4, as cwebp's, sharp's (effort 4) and jSquash's default. */
  method: number;
  /** libwebp's low_memory: no token buffer (1.3-1.6x slower), for pictures too large for one. */
  lowMemory: boolean;
  /**
   * Lossless ALPH by libwebp (its default), or where its lossless encoder would not fit, our compact
   * one (codecs/webp/alpha.c: a lossless stream of runs and copies from above, made in two passes
   * that hold nothing per pixel; the plane as it is where that is no smaller).
   */
  alphaCompression: boolean;
}

/**
 * Above this size the token buffer is not tried: for the 12 MP test photo at quality 80 it takes
 * 2.3 bytes a pixel besides the picture (its whole 30 MiB allowance), and larger photos would run
 * out of it part of the way through.
 */
const TOKEN_BUFFER_MAX_PIXELS = 4096 * 3072;
/** The token buffer may hold up to this much; a picture needing more is encoded again with low_memory. */
const TOKEN_BUFFER_MAX = 30 * MiB;
/** What the token buffer and the encoder's work beside it take per byte of VP8 data they make (20-22 measured). */
const TOKEN_BYTES_PER_VP8_BYTE = 22;
/**
 * libwebp compresses an alpha plane with its lossless encoder, which takes 24-27 bytes a pixel of
 * the plane (measured on masks at 1 and 4 MP; ARGB copies, hash chain, backward references);
 * above this size our compact encoder makes the ALPH chunk (at most the plane: 1 byte a pixel).
 */
const ALPHA_LOSSLESS_MAX_PIXELS = 1_600_000;
const ALPHA_LOSSLESS_BYTES_PER_PIXEL = 28;

/**
 * Settings for a width x height picture (with an alpha plane if `alpha`); the first libwebp tries.
 * `lowMemory` asks for libwebp's low_memory whatever the size (the memory plan's choice).
 */
export function webpEncoderSettings(width: number, height: number, alpha: boolean, lowMemory = false): WebpEncoderSettings {
  const pixels = width * height;
  return { method: 4, lowMemory: lowMemory || pixels > TOKEN_BUFFER_MAX_PIXELS, alphaCompression: alpha && pixels <= ALPHA_LOSSLESS_MAX_PIXELS };
}

/**
 * Settings to try after `settings` ran out of memory, needing less; null when none does.
 */
export function webpEncoderFallback(settings: WebpEncoderSettings): WebpEncoderSettings | null {
  if (!settings.lowMemory) return { ...settings, lowMemory: true };
  if (settings.alphaCompression) return { ...settings, alphaCompression: false };
  return null;
}

/**
 * Bytes a pixel of a detailed photo's VP8 data at `quality` (the 1 MP test photo, measured, plus a
 * quarter): what the partition buffers hold. White noise takes 2-4 times as much; a picture that
 * needs more than its limit fails instead of growing the memory.
 */
const PHOTO_OUTPUT: ReadonlyArray<[quality: number, bytesPerPixel: number]> = [
  [0, 0.2], [50, 0.2], [75, 0.28], [80, 0.34], [85, 0.41], [90, 0.5], [95, 0.64], [100, 0.79],
];

function photoOutputBytesPerPixel(quality: number): number {
  const q = Math.min(100, Math.max(0, quality));
  for (let i = 1; i < PHOTO_OUTPUT.length; i++) {
    const [q1, b1] = PHOTO_OUTPUT[i];
    if (q <= q1) {
      const [q0, b0] = PHOTO_OUTPUT[i - 1];
      return b0 + ((b1 - b0) * (q - q0)) / (q1 - q0);
    }
  }
  return PHOTO_OUTPUT[PHOTO_OUTPUT.length - 1][1];
}

/**
 * libwebp's encoder state besides the picture (webp_enc.c InitVP8Encoder, the figure it prints
 * with PRINT_MEMORY_INFO): per macroblock its info (4 bytes) and 16 intra prediction modes, and two
 * rows of top samples; the structure itself is in FIXED.
 */
function encoderStateBytes(width: number, height: number): number {
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  return 4 * mbWidth * mbHeight + (4 * mbWidth + 1) * (4 * mbHeight + 1) + 2 * 16 * mbWidth + 4 * (mbWidth + 1);
}

/**
 * What libwebp's bit writers hold to make `vp8Bytes` of VP8 data (utils/bit_writer_utils.c): a
 * partition's buffer doubles as it fills, the old one still held while it is copied into the new
 * (1.5 times the capacity reached), and partition 0 (the modes, at most 512 KB) is made at the end
 * beside the full token partition, from mb_w * mb_h * 7/8 bytes up.
 */
function partitionBytes(width: number, height: number, vp8Bytes: number): number {
  const partition0 = 1.5 * Math.max(Math.ceil(width / 16) * Math.ceil(height / 16) * (7 / 8), MiB);
  return Math.max(1.5 * vp8Bytes, vp8Bytes + partition0);
}

/** The import of one band: its RGBA rows and libwebp's YUV conversion of them (the odd row carried over too). */
function bandImportBytes(width: number, height: number, alpha: boolean): number {
  return (ENCODER_BAND_ROWS_MAX + 1) * Math.max(width, height) * (4 + 1.5 + (alpha ? 1 : 0));
}

/** libwebp's picture: YUV 4:2:0 (1.5 bytes a pixel) and the alpha plane (1 byte). */
function pictureBytes(width: number, height: number, alpha: boolean): number {
  const pixels = width * height;
  return pixels + 2 * Math.ceil(width / 2) * Math.ceil(height / 2) + (alpha ? pixels : 0);
}

/** The WebAssembly memory the encoder holds while bands are imported, before it encodes. */
export function webpEncoderImportWasmBytes(width: number, height: number, alpha: boolean): number {
  return wasmBytes(FIXED + pictureBytes(width, height, alpha) + bandImportBytes(width, height, alpha));
}

/**
 * The most libwebp may allocate to encode a width x height picture at `quality`, whatever settings
 * the encoder falls back to (the instance's limit): the picture, YUV 4:2:0 (1.5 bytes a pixel) and
 * the alpha plane (1 byte), and then the larger of
 * - the import of one band (its rectangle buffer is freed before the encode), and
 * - the work: the encoder state with the bit writers holding at most `vp8Bytes` of VP8 data
 *   (webpVp8BytesMax unless the plan gave the result less); the token buffer where it is tried
 *   (about 22 times the VP8 data it codes, measured at q50-95 on photos, sharpened and blurred
 *   ones too: room for as much as the bit writers may make, at most 30 MiB, so that a picture more
 *   detailed than a photo is not encoded twice); the lossless alpha encoder where it is used; an
 *   alpha plane stored as it is (a copy and the chunk).
 */
export function webpEncoderLimitBytes(width: number, height: number, alpha: boolean, quality: number, lowMemory = false, vp8Bytes?: number): number {
  const pixels = width * height;
  const settings = webpEncoderSettings(width, height, alpha, lowMemory);
  const picture = pictureBytes(width, height, alpha);
  const data = Math.min(vp8Bytes ?? Infinity, webpVp8BytesMax(width, height, quality));
  const lowMemoryWork = encoderStateBytes(width, height) + partitionBytes(width, height, data);
  const tokenWork = settings.lowMemory ? 0 : Math.min(TOKEN_BUFFER_MAX, TOKEN_BYTES_PER_VP8_BYTE * data);
  let work = Math.max(lowMemoryWork, tokenWork);
  if (alpha) {
    // The plane is encoded after the encoder's state is made (webp_enc.c: VP8EncStartAlpha), and
    // the ALPH chunk (at most the plane) is kept while the VP8 data is made. The compact encoder
    // holds only its chunk.
    const alphaPhase = encoderStateBytes(width, height) + (settings.alphaCompression ? ALPHA_LOSSLESS_BYTES_PER_PIXEL * pixels : pixels + 4096);
    work = Math.max(alphaPhase, pixels + work);
  }
  return FIXED + picture + Math.max(bandImportBytes(width, height, alpha), work);
}

/**
 * The most VP8 data the encoder is allowed to make, 1.6 times a detailed photo's at `quality`: the
 * bit writers are given room for it (and no more), so a picture that would come out larger (white
 * noise, mostly) fails inside libwebp before any such file exists.
 */
function webpVp8BytesMax(width: number, height: number, quality: number): number {
  return 1.6 * photoOutputBytesPerPixel(quality) * width * height;
}

/**
 * The largest file the encoder can make within its limit: the VP8 data the bit writers have room
 * for and an alpha plane at most as it is. The result buffer is capped here too, not at the noise
 * bound: the same bytes are not counted twice.
 */
export function webpEncodedBytesMax(width: number, height: number, alpha: boolean, quality: number): number {
  return Math.ceil(webpVp8BytesMax(width, height, quality) + (alpha ? width * height : 0)) + 64 * 1024;
}

/** The WebAssembly memory an encode of a width x height picture at `quality` grows to at most. */
export function webpEncoderWasmBytes(width: number, height: number, alpha: boolean, quality: number, lowMemory = false, vp8Bytes?: number): number {
  return wasmBytes(webpEncoderLimitBytes(width, height, alpha, quality, lowMemory, vp8Bytes));
}

/**
 * Most bytes a file can have: white noise (the least compressible picture) at any quality, and an
 * alpha plane at most as it is (above ALPHA_LOSSLESS_MAX_PIXELS it is stored so: 1 byte a pixel).
 */
export function webpResultBytes(pixels: number, alpha = false): number {
  return 1.15 * pixels + (alpha ? pixels : 0) + 256 * 1024;
}
