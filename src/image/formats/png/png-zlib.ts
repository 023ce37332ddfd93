import { damaged } from '../../bytes';
import { openEmscripten, type WasmInstance } from '../../codecs/codec';
import pngZlibFactory from '../../codecs/wasm/png-zlib.js';
import pngZlibWasm from '../../codecs/wasm/png-zlib.wasm';
import { outOfMemory } from '../jpeg/libjpeg';

/**
 * Our build of zlib with the PNG band decoder and encoder of codecs/png (decoder.c, encoder.c),
 * which decode.ts and encode.ts drive. A fresh instance per job, released when the job ends.
 */
export interface PngZlib {
  HEAPU8: Uint8Array;
  _decoder_create(width: number, height: number, bitDepth: number, colourType: number, interlaced: number, x: number, y: number, regionWidth: number, regionHeight: number, bandRows: number): number;
  _decoder_palette(decoder: number): number;
  _decoder_set_key(decoder: number, k0: number, k1: number, k2: number): void;
  _decoder_read(decoder: number): number;
  _decoder_band(decoder: number): number;
  _decoder_message(decoder: number): number;
  _decoder_destroy(decoder: number): void;
  _encoder_create(width: number, channels: number, level: number, filter: number, graphicLevel: number): number;
  _encoder_band(encoder: number, rows: number): number;
  _encoder_write(encoder: number, rows: number): number;
  _encoder_finish(encoder: number): number;
  _encoder_message(encoder: number): number;
  _encoder_destroy(encoder: number): void;
}

/** What the C side calls back: the next compressed bytes of a stream (decoder), a finished IDAT chunk (encoder). */
export interface PngZlibCallbacks {
  pngReadInput?(stream: number, view: Uint8Array): number;
  pngWriteOutput?(chunk: Uint8Array): void;
}

/** codec_status of codecs/png/codec.h. */
const DAMAGED = -1;
const OUT_OF_MEMORY = -2;

export function openPngZlib(role: 'png-decoder' | 'png-encoder', callbacks: PngZlibCallbacks): Promise<WasmInstance<PngZlib>> {
  return openEmscripten<PngZlib>(pngZlibFactory, pngZlibWasm, { callbacks, role });
}

/** The error for a status < 0, with the C side's message at `message`: damage is the file's fault, memory is not, the rest is a bug. */
export function statusError(lib: PngZlib, status: number, message: number): Error {
  const heap = lib.HEAPU8;
  const text = new TextDecoder('latin1').decode(heap.subarray(message, heap.indexOf(0, message)));
  if (status === DAMAGED) return damaged(text);
  if (status === OUT_OF_MEMORY) return outOfMemory(text);
  return new Error(`png codec failed (${status}): ${text}`);
}
