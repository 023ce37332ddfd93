import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import { openEmscripten, type WasmInstance } from '../../codecs/codec';
import libjpegFactory from '../../codecs/wasm/libjpeg.js';
import libjpegWasm from '../../codecs/wasm/libjpeg.wasm';

/**
 * Our build of libjpeg-turbo (codecs/jpeg): one module holding the band decoder and the band
 * encoder of codecs/jpeg/decoder.c and encoder.c, which decode.ts and encode.ts drive. A fresh
 * instance per job, released when the job ends.
 */

/** The functions of libjpeg.js that decode.ts and encode.ts call. */
export interface Libjpeg {
  HEAPU8: Uint8Array;
  _decoder_create(memoryLimit: number, maxScans: number, maxBlockPasses: number): number;
  _decoder_read_header(decoder: number): number;
  _decoder_header(decoder: number): number;
  _decoder_start(decoder: number, scaleDenom: number, x: number, y: number, width: number, height: number, bandRows: number): number;
  _decoder_start_entry(): number;
  _decoder_read(decoder: number, maxRows: number): number;
  _decoder_band(decoder: number): number;
  _decoder_message(decoder: number): number;
  _decoder_memory_peak(decoder: number): number;
  _decoder_destroy(decoder: number): void;
  _encoder_create(memoryLimit: number): number;
  _encoder_start(encoder: number, width: number, height: number, quality: number, components: number, optimize: number, bandRows: number): number;
  _encoder_start_placed(encoder: number, width: number, height: number, quality: number, components: number, optimize: number, bandRows: number, orientation: number): number;
  _encoder_band(encoder: number): number;
  _encoder_write(encoder: number, rows: number): number;
  _encoder_place(encoder: number, rows: number): number;
  _encoder_finish(encoder: number): number;
  _encoder_finish_entry(): number;
  _encoder_message(encoder: number): number;
  _encoder_memory_peak(encoder: number): number;
  _encoder_destroy(encoder: number): void;
}


/** codec_status of codecs/jpeg/codec.h. */
const DAMAGED = -1;
export const OUT_OF_MEMORY = -2;
const WORK_LIMIT = -3;

/** Fields of decoder_header (enum header_field in decoder.c). */
export const HEADER = { width: 0, height: 1, components: 2, multiScan: 5, h0: 10, v0: 14, fields: 20 } as const;

export function outOfMemory(detail: string): AppError {
  return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', detail);
}

export function cString(lib: Libjpeg, pointer: number): string {
  const heap = lib.HEAPU8;
  const end = heap.indexOf(0, pointer);
  return new TextDecoder('latin1').decode(heap.subarray(pointer, end < 0 ? pointer : end));
}

/** The error for a status < 0: damage and the work limit are the file's fault, memory is not, the rest is a bug. */
export function statusError(status: number, message: string, what: string): Error {
  if (status === DAMAGED) return damaged(`jpeg: ${message}`);
  if (status === WORK_LIMIT) return damaged(`jpeg: too much work to decode: ${message}`);
  if (status === OUT_OF_MEMORY) return outOfMemory(`libjpeg ${what}: ${message}`);
  return new Error(`libjpeg ${what} failed (${status}): ${message}`);
}

/**
 * The yield points count the pixels of each row of blocks a long call works through: a scan of a
 * multi-scan file being read, or the optimised Huffman tables' passes (measured 3-6 ns each).
 */
const NS_PER_YIELD_UNIT = 6;

export function openLibjpeg(role: 'jpeg-decoder' | 'jpeg-encoder', callbacks: object): Promise<WasmInstance<Libjpeg>> {
  return openEmscripten<Libjpeg>(libjpegFactory, libjpegWasm, { callbacks, nsPerYieldUnit: NS_PER_YIELD_UNIT, role });
}
