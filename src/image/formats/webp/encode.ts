import { concat } from '../../bytes';
import { ResultBuffer, resultTooLarge } from '../../result-buffer';
import type { ResultSink } from '../../result-sink';
import { copyPixels } from '../../run-context';
import { applyOrientation } from '../../stages/orient';
import type { EncodeOptions, RowEncoder, RowSource } from '../../stages/rows';
import type { WasmInstance } from '../../codecs/codec';
import { heap, type Libwebp, OUT_OF_MEMORY, OVER_LIMIT, openLibwebp, outOfMemory, statusError } from './libwebp';
import { webpEncoderFallback, webpEncoderLimitBytes, webpEncoderSettings, webpResultBytes, type WebpEncoderSettings } from './memory';

/**
 * WebP encoding on our build of libwebp (codecs/webp/encoder.c). libwebp encodes from a whole
 * picture, so the picture is held anyway, as YUV 4:2:0 (1.5 bytes a pixel, plus 1 for alpha): each
 * band of RGBA rows is converted by libwebp's own import and written where a viewer sees it (EXIF
 * orientation applied), and the file comes out in pieces. The result is the file libwebp's
 * WebPEncode makes of the whole oriented image with sharp's and jSquash's settings at the same
 * quality, byte for byte, unless the picture is too large for those (libwebp-memory.ts).
 */

/** Measurements of the last encode, for tests and the benchmark. */
export interface WebpEncodeStats {
  settings: WebpEncoderSettings;
  /** How many encodes ran out of memory before the one that made the file. */
  fallbacks: number;
  /** The most libwebp held at once, and the instance's memory at the end. */
  libwebpPeakBytes: number;
  wasmBytes: number;
}

/** Stored rows whose placement waits for the next band (an odd row that would split a 2x2 block). */
interface Rows {
  y: number;
  rows: number;
  data: Uint8Array;
}

/**
 * Where stored rows [y, y + rows) go: orientations 1, 2, 5 and 8 keep the stored row order along
 * the output's rows (1, 2) or columns (5, 8); 3, 4, 6 and 7 reverse it.
 */
function placement(orientation: number, storedHeight: number, y: number, rows: number) {
  const reversed = [3, 4, 6, 7].includes(orientation);
  const start = reversed ? storedHeight - y - rows : y;
  return orientation >= 5 ? { x: start, y: 0 } : { x: 0, y: start };
}

/**
 * How many of the stored rows [y, y + rows) to place now: libwebp's import averages chroma over
 * 2x2 blocks, so a piece must start at an even output row (column for 5-8) and span an even
 * number of them unless it reaches the picture's far edge. An odd leftover row waits.
 */
function rowsToPlace(orientation: number, storedHeight: number, y: number, rows: number): number {
  const reversed = [3, 4, 6, 7].includes(orientation);
  if (reversed) {
    const start = storedHeight - y - rows; // the block's first output row, where the last stored row goes
    return start % 2 === 0 ? rows : rows - 1;
  }
  return (y + rows) % 2 === 0 || y + rows === storedHeight ? rows : rows - 1;
}

/**
 * Encodes `source` as WebP at `options.quality` with EXIF `options.orientation` applied (the result
 * is height x width for 5-8) and closes the source. `stats`, if given, receives what the encode used.
 */
export async function encodeWebp(source: RowSource, options: EncodeOptions, stats?: WebpEncodeStats): Promise<Uint8Array> {
  const output = new ResultBuffer(options.maxBytes ?? webpResultBytes(source.width * source.height, source.alpha));
  await writeWebp(source, options, output, stats);
  return output.bytes();
}

/** encodeWebp into `output`: libwebp writes the whole file at the end of its one encode call. */
export async function writeWebp(source: RowSource, options: EncodeOptions, output: ResultSink, stats?: WebpEncodeStats): Promise<void> {
  const { width, height, alpha } = source;
  const { orientation, quality, lowMemory = false } = options;
  const [outWidth, outHeight] = orientation >= 5 ? [height, width] : [width, height];
  let wasm: WasmInstance<Libwebp> | null = null;
  let encoder = 0;
  try {
    if (source.model !== 'rgba') throw new Error(`webp: cannot encode ${source.model} bands`);
    if (!(Number.isInteger(orientation) && orientation >= 1 && orientation <= 8)) throw new Error(`webp: orientation ${orientation}`);
    if (!(Number.isInteger(quality) && quality >= 1 && quality <= 100)) throw new Error(`webp: quality ${quality}`);
    const instance = await openLibwebp('webp-encoder', {
      webpWriteOutput(pointer: number, size: number): number {
        output.write(heap(instance).subarray(pointer, pointer + size));
        return 1;
      },
    });
    wasm = instance;
    const lib = instance.instance;
    // The bit writers get room for as much VP8 data as the result may take (the plan's cap, when it gave one).
    lib._codec_memory_set_limit(webpEncoderLimitBytes(outWidth, outHeight, alpha, quality, lowMemory, options.maxBytes));
    encoder = lib._encoder_create(outWidth, outHeight, alpha ? 1 : 0);
    if (!encoder) throw outOfMemory('libwebp encoder_create');
    const check = (status: number, what: string) => {
      if (status < 0) throw statusError(status, what, false);
    };
    check(lib._encoder_status(encoder), 'encoder_create');

    const place = ({ y, rows, data }: Rows) => {
      const oriented = applyOrientation({ data, width, height: rows }, orientation);
      const at = placement(orientation, height, y, rows);
      const pointer = lib._encoder_rows(encoder, oriented.data.length);
      if (!pointer) check(lib._encoder_status(encoder), 'encoder_rows');
      copyPixels(() => heap(instance).set(oriented.data, pointer));
      check(lib._encoder_import(encoder, at.x, at.y, oriented.width, oriented.height), 'import');
    };
    const rowBytes = width * 4;
    let waiting: Rows | null = null;
    let next = 0;
    for (let band = await source.read(); band; band = await source.read()) {
      if (band.y !== next) throw new Error(`webp: band at row ${band.y}, expected ${next}`);
      next += band.rows;
      let rows: Rows = { y: band.y, rows: band.rows, data: band.data.subarray(0, band.rows * rowBytes) };
      if (waiting) rows = { y: waiting.y, rows: waiting.rows + rows.rows, data: concat([waiting.data, rows.data]) };
      const now = rowsToPlace(orientation, height, rows.y, rows.rows);
      if (now > 0) place({ y: rows.y, rows: now, data: rows.data.subarray(0, now * rowBytes) });
      waiting = now < rows.rows ? { y: rows.y + now, rows: rows.rows - now, data: rows.data.slice(now * rowBytes) } : null;
    }
    if (next !== height || waiting) throw new Error(`webp: the source ended after ${next} of ${height} rows`);

    let settings: WebpEncoderSettings | null = webpEncoderSettings(outWidth, outHeight, alpha, lowMemory);
    let fallbacks = 0;
    for (;;) {
      // libwebp encodes the picture in one call; it yields at its progress reports (codecs/webp/encoder.c).
      // Alpha: 1 libwebp's lossless encoder, 2 the compact one (codecs/webp/alpha.c).
      const flags = [settings.method, settings.lowMemory ? 1 : 0, settings.alphaCompression ? 1 : 2];
      const status = await instance.callYielding(lib._encoder_encode_entry(), encoder, quality, ...flags);
      if (status !== OUT_OF_MEMORY && status !== OVER_LIMIT) {
        check(status, 'encode');
        break;
      }
      // A retry writes the file from its start: only possible while none of it has gone out.
      const fallback: WebpEncoderSettings | null = output.length === 0 ? webpEncoderFallback(settings) : null;
      // Past its limit with nothing left to try, libwebp's bit writers had no room for more VP8 data.
      if (!fallback && status === OVER_LIMIT) throw resultTooLarge(options.maxBytes ?? webpResultBytes(width * height, alpha));
      if (!fallback) check(status, 'encode');
      settings = fallback!;
      fallbacks++;
    }
    if (stats) {
      stats.settings = settings;
      stats.fallbacks = fallbacks;
      stats.libwebpPeakBytes = lib._codec_memory_peak();
      stats.wasmBytes = instance.usedBytes();
    }
  } finally {
    source.close();
    if (encoder) wasm?.instance._encoder_destroy(encoder);
    wasm?.release();
  }
  await output.drain();
}

export const webpEncoder: RowEncoder = {
  placesOrientation: true,
  encode: (source, options, sink) => writeWebp(source, options, sink),
};
