import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import { resultBytes } from '../../memory-plan';
import { ResultBuffer } from '../../result-buffer';
import { readJpegFrame, type JpegFrame } from './header';
import type { Region } from '../../operations';
import type { Band, DecodeOptions, EncodeOptions, RowDecoder, RowEncoder, RowSource } from '../../stages/rows';
import { openEmscripten, type WasmInstance } from '../../codecs/codec';
import { decoderLibjpegBytes, encoderLibjpegBytes, JPEG_BAND_ROWS, JPEG_MAX_BLOCK_PASSES, JPEG_MAX_SCANS } from './memory';
import libjpegFactory from '../../codecs/wasm/libjpeg.js';
import libjpegWasm from '../../codecs/wasm/libjpeg.wasm';

/**
 * JPEG decoding and encoding in bands on our own build of libjpeg-turbo (codecs/jpeg): the decoder
 * pulls the file in 16 KB chunks and hands out 16-row bands from a buffer inside the WebAssembly
 * memory, at 1/1, 1/2, 1/4 or 1/8 scale (libjpeg's DCT scaling) or only a window of the image; the
 * encoder takes bands and passes the file out in chunks. Neither holds a frame: a baseline 12 MP
 * decode runs in about 1 MB of WebAssembly memory (libjpeg-memory.ts has the cost of every case).
 */

/** The functions of libjpeg.js that this file calls (codecs/jpeg/decoder.c and encoder.c). */
interface Libjpeg {
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
  _encoder_band(encoder: number): number;
  _encoder_write(encoder: number, rows: number): number;
  _encoder_finish(encoder: number): number;
  _encoder_finish_entry(): number;
  _encoder_message(encoder: number): number;
  _encoder_memory_peak(encoder: number): number;
  _encoder_destroy(encoder: number): void;
}

/** codec_status of codecs/jpeg/codec.h. */
const DAMAGED = -1;
const OUT_OF_MEMORY = -2;
const WORK_LIMIT = -3;

/** Fields of decoder_header (enum header_field in decoder.c). */
const HEADER = { width: 0, height: 1, components: 2, multiScan: 5, h0: 10, v0: 14, fields: 20 } as const;

function outOfMemory(detail: string): AppError {
  return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', detail);
}

function cString(lib: Libjpeg, pointer: number): string {
  const heap = lib.HEAPU8;
  const end = heap.indexOf(0, pointer);
  return new TextDecoder('latin1').decode(heap.subarray(pointer, end < 0 ? pointer : end));
}

/** The error for a status < 0: damage and the work limit are the file's fault, memory is not, the rest is a bug. */
function statusError(status: number, message: string, what: string): Error {
  if (status === DAMAGED) return damaged(`jpeg: ${message}`);
  if (status === WORK_LIMIT) return damaged(`jpeg: too much work to decode: ${message}`);
  if (status === OUT_OF_MEMORY) return outOfMemory(`libjpeg ${what}: ${message}`);
  return new Error(`libjpeg ${what} failed (${status}): ${message}`);
}

function openLibjpeg(callbacks: object): Promise<WasmInstance<Libjpeg>> {
  return openEmscripten<Libjpeg>(libjpegFactory, libjpegWasm, callbacks);
}

/** Size of a decode at 1/shrink, as libjpeg rounds: ceil(side / shrink). */
export function scaledSize(side: number, shrink: number): number {
  return Math.ceil(side / shrink);
}

/** What a band decode tells besides its bands (for the memory plan's checks, tests and the benchmark). */
export interface JpegDecodeInfo {
  frame: JpegFrame;
  /** The most bytes libjpeg held at once so far (its allocations, not the band buffers); kept after close. */
  libjpegPeakBytes(): number;
  /** Size of the WebAssembly memory now. */
  wasmBytes(): number;
}

function checkWindow(frame: JpegFrame, { shrink, region }: DecodeOptions): Region {
  if (!jpegDecoder.shrinkFactors.includes(shrink)) throw new Error(`jpeg: shrink ${shrink} is not one of ${jpegDecoder.shrinkFactors}`);
  const width = scaledSize(frame.width, shrink);
  const height = scaledSize(frame.height, shrink);
  if (!region) return { x: 0, y: 0, width, height };
  if (shrink !== 1) throw new Error('jpeg: a region is decoded at shrink 1 only');
  const { x, y } = region;
  if (!(x >= 0 && y >= 0 && region.width >= 1 && region.height >= 1 && x + region.width <= width && y + region.height <= height)) {
    throw new Error(`jpeg: region ${JSON.stringify(region)} is outside the ${width}x${height} image`);
  }
  return region;
}

/**
 * Opens a band decode of `input`: the frame header is read here (damage is UNSUPPORTED_FORMAT) and
 * libjpeg may allocate no more than `libjpegBytes` (by default decoderLibjpegBytes, its need for
 * this header), so a file whose scans ask for more than its header promised fails instead of
 * growing the memory; over the limit is CONVERSION_FAILED. libjpeg's header must agree with ours.
 * A progressive file is read whole (its coefficients) before this returns.
 */
export async function openJpegDecode(input: Uint8Array, options: DecodeOptions, libjpegBytes?: number): Promise<RowSource & JpegDecodeInfo> {
  const frame = readJpegFrame(input);
  const window = checkWindow(frame, options);
  const memoryLimit = libjpegBytes ?? decoderLibjpegBytes(frame, options.shrink);
  let position = 0;
  const wasm = await openLibjpeg({
    jpegReadInput(view: Uint8Array): number {
      const count = Math.min(view.length, input.length - position);
      view.set(input.subarray(position, position + count));
      position += count;
      return count;
    },
    jpegSkipInput(count: number): void {
      position = Math.min(input.length, position + count);
    },
  });
  const lib = wasm.instance;
  let decoder = 0;
  let y = 0;
  let libjpegPeak = 0;
  const close = () => {
    if (decoder) {
      libjpegPeak = lib._decoder_memory_peak(decoder);
      lib._decoder_destroy(decoder);
    }
    decoder = 0;
    wasm.release();
  };
  const check = (status: number, what: string) => {
    if (status >= 0) return status;
    const error = statusError(status, cString(lib, lib._decoder_message(decoder)), what);
    close();
    throw error;
  };
  try {
    decoder = lib._decoder_create(memoryLimit, JPEG_MAX_SCANS, JPEG_MAX_BLOCK_PASSES);
    if (!decoder) throw outOfMemory('libjpeg decoder_create');
    check(lib._decoder_read_header(decoder), 'read_header');
    const header = new Int32Array(lib.HEAPU8.buffer, lib._decoder_header(decoder), HEADER.fields);
    const sampling = frame.sampling.map((_, c) => ({ h: header[HEADER.h0 + c], v: header[HEADER.v0 + c] }));
    const libjpegFrame = { width: header[HEADER.width], height: header[HEADER.height], components: header[HEADER.components], sampling, multiScan: header[HEADER.multiScan] === 1 };
    const ours = { width: frame.width, height: frame.height, components: frame.components, sampling: frame.sampling, multiScan: frame.multiScan };
    // The memory limit was computed from our reading; libjpeg must have read the same frame.
    if (JSON.stringify(libjpegFrame) !== JSON.stringify(ours)) throw damaged(`jpeg: libjpeg reads the frame as ${JSON.stringify(libjpegFrame)}, the header reader as ${JSON.stringify(ours)}`);
    // Reads every scan of a multi-scan file (0.4 s for a 12 MP progressive photo), letting other runs go on meanwhile.
    const started = await wasm.callYielding(lib._decoder_start_entry(), decoder, options.shrink, window.x, window.y, window.width, window.height, JPEG_BAND_ROWS);
    check(started, 'start');
  } catch (error) {
    close();
    throw error;
  }
  const { width, height } = window;
  return {
    width,
    height,
    model: frame.components === 4 ? 'cmyk' : 'rgba',
    alpha: false,
    grey: frame.components === 1,
    frame,
    async read(): Promise<Band | null> {
      if (!decoder || y >= height) {
        close();
        return null;
      }
      const rows = check(lib._decoder_read(decoder, JPEG_BAND_ROWS), 'read');
      if (rows === 0) {
        close();
        throw new Error('libjpeg decoder_read gave no rows before the end of the window');
      }
      const pointer = lib._decoder_band(decoder);
      const band = { y, rows, data: lib.HEAPU8.subarray(pointer, pointer + rows * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => 0,
    close,
    libjpegPeakBytes: () => (decoder ? lib._decoder_memory_peak(decoder) : libjpegPeak),
    wasmBytes: () => wasm.memory.buffer.byteLength,
  };
}

export const jpegDecoder: RowDecoder = {
  shrinkFactors: [1, 2, 4, 8],
  open: openJpegDecode,
};

export interface JpegEncodeOptions {
  /** 1..100, scaling libjpeg's Annex K tables (jpeg_set_quality). */
  quality: number;
  /**
   * Huffman tables optimised for the image (libjpeg's optimize_coding, sharp's default): 6% (q80)
   * to 15% (q95) smaller files of the 12 MP photo, but libjpeg keeps the whole image's
   * coefficients until the end (encoderLibjpegBytes says how much).
   */
  optimizeHuffman: boolean;
  /** Most bytes the file may have (the memory plan's bound); unset: the noise bound for the size and quality. */
  maxBytes?: number;
}

/** Measurements of the last encode, for tests and the benchmark. */
export interface JpegEncodeStats {
  libjpegPeakBytes: number;
  wasmBytes: number;
}

/**
 * Encodes `source` (RGBA bands, top to bottom) as a baseline JPEG with libjpeg's default settings
 * (4:2:0; a grey source gives a one-component JPEG) and closes it. `stats`, if given, receives the
 * memory the encode used.
 */
export async function encodeJpeg(source: RowSource, options: JpegEncodeOptions, stats?: JpegEncodeStats): Promise<Uint8Array> {
  const { width, height } = source;
  const output = new ResultBuffer(options.maxBytes ?? resultBytes('jpeg', width * height, options.quality));
  let wasm: WasmInstance<Libjpeg> | null = null;
  let encoder = 0;
  try {
    if (source.model !== 'rgba') throw new Error(`jpeg: cannot encode ${source.model} bands`);
    wasm = await openLibjpeg({ jpegWriteOutput: (chunk: Uint8Array) => output.append(chunk) });
    const lib = wasm.instance;
    const components = source.grey ? 1 : 3;
    encoder = lib._encoder_create(encoderLibjpegBytes(width, height, components, options.optimizeHuffman));
    if (!encoder) throw outOfMemory('libjpeg encoder_create');
    const check = (status: number, what: string) => {
      if (status < 0) throw statusError(status, cString(lib, lib._encoder_message(encoder)), what);
    };
    check(lib._encoder_start(encoder, width, height, options.quality, components, options.optimizeHuffman ? 1 : 0, JPEG_BAND_ROWS), 'start');
    let written = 0;
    for (let band = await source.read(); band; band = await source.read()) {
      if (band.y !== written) throw new Error(`jpeg: band at row ${band.y}, expected ${written}`);
      for (let r = 0; r < band.rows; r += JPEG_BAND_ROWS) {
        const rows = Math.min(JPEG_BAND_ROWS, band.rows - r);
        lib.HEAPU8.set(band.data.subarray(r * width * 4, (r + rows) * width * 4), lib._encoder_band(encoder));
        check(lib._encoder_write(encoder, rows), 'write');
      }
      written += band.rows;
    }
    if (written !== height) throw new Error(`jpeg: the source ended after ${written} of ${height} rows`);
    // With optimised tables, the whole image is entropy-coded here; other runs can go on meanwhile.
    check(await wasm.callYielding(lib._encoder_finish_entry(), encoder), 'finish');
    if (stats) {
      stats.libjpegPeakBytes = lib._encoder_memory_peak(encoder);
      stats.wasmBytes = wasm.memory.buffer.byteLength;
    }
  } finally {
    source.close();
    if (encoder) wasm?.instance._encoder_destroy(encoder);
    wasm?.release();
  }
  return output.bytes();
}

/**
 * Images up to this size are encoded with optimised Huffman tables by `jpegEncoder` (byte for byte
 * sharp's default output): its coefficient buffer is 3 bytes a pixel, 36 MB at 12 MP. Larger
 * images get libjpeg's standard tables (6% more bytes at q80, 17% at q95 on the 12 MP photo) in
 * about 1 MB. The pipeline can decide for itself with encodeJpeg and jpegEncodeWasmBytes.
 */
export const JPEG_OPTIMIZE_MAX_PIXELS = 12_600_000;

export const jpegEncoder: RowEncoder = {
  placesOrientation: false,
  encode(source: RowSource, { quality, orientation, maxBytes, lowMemory }: EncodeOptions): Promise<Uint8Array> {
    if (orientation !== 1) {
      source.close();
      return Promise.reject(new Error(`jpeg: the encoder does not place orientation ${orientation}`));
    }
    const optimizeHuffman = lowMemory === undefined ? source.width * source.height <= JPEG_OPTIMIZE_MAX_PIXELS : !lowMemory;
    return encodeJpeg(source, { quality, optimizeHuffman, maxBytes });
  },
};
