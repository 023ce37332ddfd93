import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import { openEmscripten, type WasmInstance } from '../../codecs/codec';
import libwebpFactory from '../../codecs/wasm/libwebp.js';
import libwebpWasm from '../../codecs/wasm/libwebp.wasm';

/**
 * Our build of libwebp 1.2.4 (codecs/webp): one module holding a band decoder and a picture
 * encoder (codecs/webp/decoder.c, encoder.c). libwebp-decoder.ts and libwebp-encoder.ts use it; a
 * fresh instance per job, released when the job ends.
 */

/** The functions of libwebp.js that the decoder and encoder call. */
export interface Libwebp {
  _codec_memory_set_limit(bytes: number): void;
  _codec_memory_used(): number;
  _codec_memory_peak(): number;
  _codec_set_yielding(on: number): void;
  _encoder_encode_entry(): number;
  _decoder_create(inputBytes: number): number;
  _decoder_input(decoder: number): number;
  _decoder_read_header(decoder: number): number;
  _decoder_info(decoder: number): number;
  _decoder_start(decoder: number, bandRows: number): number;
  _decoder_read(decoder: number, maxRows: number): number;
  _decoder_rows(decoder: number): number;
  _decoder_decode_whole(decoder: number): number;
  _decoder_free_whole(pixels: number): void;
  _decoder_destroy(decoder: number): void;
  _encoder_create(width: number, height: number, alpha: number): number;
  _encoder_status(encoder: number): number;
  _encoder_rows(encoder: number, bytes: number): number;
  _encoder_import(encoder: number, x: number, y: number, width: number, height: number): number;
  _encoder_encode(encoder: number, quality: number, method: number, lowMemory: number, alphaCompression: number): number;
  _encoder_destroy(encoder: number): void;
}

/** codec_status of codecs/webp/codec.h. */
const DAMAGED = -1;
export const OUT_OF_MEMORY = -2;
const UNSUPPORTED = -3;
const TOO_BIG = -5;
export const OVER_LIMIT = -6;

/** The JavaScript callbacks the module's EM_JS functions call (codecs/webp/encoder.c). */
export interface LibwebpCallbacks {
  /** Copies `size` bytes at `pointer` (the next piece of an encoded file); returns 1. */
  webpWriteOutput?(pointer: number, size: number): number;
}

/**
 * The encoder's yield points count the macroblocks its passes step through (codecs/webp/encoder.c):
 * a 12 MP encode (method 4) steps through 141,000 in about 1.7 s, 12 µs each.
 */
const NS_PER_YIELD_UNIT = 12_000;

export function openLibwebp(role: 'webp-decoder' | 'webp-encoder', callbacks: LibwebpCallbacks = {}): Promise<WasmInstance<Libwebp>> {
  return openEmscripten<Libwebp>(libwebpFactory, libwebpWasm, { callbacks, nsPerYieldUnit: NS_PER_YIELD_UNIT, role });
}

/** The instance's memory as bytes; a new view after every call that may have grown it. */
export function heap(wasm: WasmInstance<Libwebp>): Uint8Array {
  return new Uint8Array(wasm.memory.buffer);
}

export function outOfMemory(detail: string): AppError {
  return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', detail);
}

/**
 * The error for a status < 0: damage and unsupported features are the file's fault, memory is not,
 * the rest is a bug. Going over the memory limit is the file's fault when decoding (the limit is
 * what any file of its size needs) and a lack of memory when encoding.
 */
export function statusError(status: number, what: string, decoding: boolean): Error {
  if (status === DAMAGED) return damaged(`webp: libwebp ${what}: the bitstream is damaged or truncated`);
  if (status === OVER_LIMIT && decoding) return damaged(`webp: libwebp ${what}: the bitstream asks for more memory than an image of its size needs`);
  if (status === OVER_LIMIT) return outOfMemory(`libwebp ${what}: over the memory limit`);
  if (status === UNSUPPORTED) return new AppError('UNSUPPORTED_FORMAT', 'This WebP file uses a feature that is not supported.', `libwebp ${what}`);
  if (status === OUT_OF_MEMORY) return outOfMemory(`libwebp ${what}`);
  if (status === TOO_BIG) return new AppError('CONVERSION_FAILED', 'The image could not be encoded as WebP: the result would exceed a limit of the format.', `libwebp ${what}`);
  return new Error(`libwebp ${what} failed (${status})`);
}
