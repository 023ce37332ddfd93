import type { WasmInstance } from '../../codecs/codec';
import { ResultBuffer } from '../../result-buffer';
import type { ResultSink } from '../../result-sink';
import { copyPixels } from '../../run-context';
import { PackedAllowanceExceeded, type EncodeOptions, type RowEncoder, type RowSource } from '../../stages/rows';
import { cString, openLibjpeg, OUT_OF_MEMORY, outOfMemory, statusError, type Libjpeg } from './libjpeg';
import { orientRows } from '../../stages/orient';
import { encoderLibjpegBytes, JPEG_BAND_ROWS, JPEG_FINISH_DRAIN_BYTES, jpegEncoderPlaces, jpegResultBytes } from './memory';

/**
 * JPEG encoding in bands on our build of libjpeg-turbo: bands go into the instance as they come and
 * the file comes out in chunks into the result sink; with standard Huffman tables about 1 MB of
 * WebAssembly memory whatever the size (memory.ts).
 */

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
  /** With optimised tables: the coefficients packed, their values within this many bytes (EncodeOptions.packedBytes). */
  packedBytes?: number;
  /**
   * EXIF orientation to apply (default 1): 2 mirrors each band; 3-8 are placed by the encoder
   * (codecs/jpeg/encoder.c, placed mode: 1.5 bytes a pixel instead of an RGB frame's 3), and the
   * file is the one the rows as a viewer sees them would give.
   */
  orientation?: number;
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
  const output = new ResultBuffer(options.maxBytes ?? jpegResultBytes(source.width * source.height, options.quality));
  await writeJpeg(source, options, output, stats);
  return output.bytes();
}

/**
 * encodeJpeg into `output`: the file goes out band by band (standard tables), or all at the end
 * (optimised tables, which need every coefficient first).
 */
export async function writeJpeg(stored: RowSource, options: JpegEncodeOptions, output: ResultSink, stats?: JpegEncodeStats): Promise<void> {
  const orientation = options.orientation ?? 1;
  const placed = jpegEncoderPlaces(orientation);
  const source = orientation === 2 ? orientRows(stored, 2) : stored;
  const { width, height } = source;
  const [outWidth, outHeight] = orientation >= 5 ? [height, width] : [width, height];
  let wasm: WasmInstance<Libjpeg> | null = null;
  let encoder = 0;
  let gaveUpPacking = false;
  try {
    if (source.model !== 'rgba') throw new Error(`jpeg: cannot encode ${source.model} bands`);
    wasm = await openLibjpeg('jpeg-encoder', { jpegWriteOutput: (chunk: Uint8Array) => output.write(chunk) });
    const lib = wasm.instance;
    const components = source.grey ? 1 : 3;
    const packed = options.optimizeHuffman ? options.packedBytes : undefined;
    encoder = lib._encoder_create(encoderLibjpegBytes(outWidth, outHeight, components, options.optimizeHuffman, packed));
    if (!encoder) throw outOfMemory('libjpeg encoder_create');
    const check = (status: number, what: string) => {
      if (status >= 0) return;
      const message = cString(lib, lib._encoder_message(encoder));
      // Nothing is written before encoder_finish's output pass, which packs nothing more.
      if (status === OUT_OF_MEMORY && packed !== undefined && output.length === 0) throw new PackedAllowanceExceeded(`libjpeg ${what}: ${message}`);
      throw statusError(status, message, what);
    };
    const optimize = options.optimizeHuffman ? 1 : 0;
    check(
      placed
        ? lib._encoder_start_placed(encoder, width, height, options.quality, components, optimize, JPEG_BAND_ROWS, orientation)
        : lib._encoder_start(encoder, width, height, options.quality, components, optimize, JPEG_BAND_ROWS),
      'start',
    );
    let written = 0;
    for (let band = await source.read(); band; band = await source.read()) {
      if (band.y !== written) throw new Error(`jpeg: band at row ${band.y}, expected ${written}`);
      for (let r = 0; r < band.rows; r += JPEG_BAND_ROWS) {
        const rows = Math.min(JPEG_BAND_ROWS, band.rows - r);
        copyPixels(() => lib.HEAPU8.set(band.data.subarray(r * width * 4, (r + rows) * width * 4), lib._encoder_band(encoder)));
        check(placed ? lib._encoder_place(encoder, rows) : lib._encoder_write(encoder, rows), 'write');
      }
      written += band.rows;
      await output.drain();
    }
    if (written !== height) throw new Error(`jpeg: the source ended after ${written} of ${height} rows`);
    // With optimised tables or placed rows, the whole image is entropy-coded here; other runs can go on meanwhile,
    // and the sink is drained as the file comes out, not held whole (memory.ts, jpegFinishBurstBytes).
    let drainedAt = output.length;
    wasm.atYield = () => {
      if (output.length - drainedAt < JPEG_FINISH_DRAIN_BYTES) return undefined;
      drainedAt = output.length;
      return output.drain();
    };
    check(await wasm.callYielding(lib._encoder_finish_entry(), encoder), 'finish');
    await output.drain();
    if (stats) {
      stats.libjpegPeakBytes = lib._encoder_memory_peak(encoder);
      stats.wasmBytes = wasm.usedBytes();
    }
  } catch (error) {
    // The memory grew for packed coefficients that did not fit: the run is done again with the
    // standard tables, whose instance would take it from the pool and hold it all, uncounted
    // (lentExcessBytes), so that other conversions wait for memory until the end of the run.
    if (error instanceof PackedAllowanceExceeded) gaveUpPacking = true;
    throw error;
  } finally {
    source.close();
    if (encoder) wasm?.instance._encoder_destroy(encoder);
    wasm?.release(!gaveUpPacking);
  }
}

/**
 * Images up to this size are encoded with optimised Huffman tables by `jpegEncoder` (byte for byte
 * sharp's default output): its coefficient buffer is 3 bytes a pixel, 36 MB at 12 MP. Larger
 * images get libjpeg's standard tables (6% more bytes at q80, 17% at q95 on the 12 MP photo) in
 * about 1 MB. The pipeline can decide for itself with encodeJpeg and jpegEncodeWasmBytes.
 */
export const JPEG_OPTIMIZE_MAX_PIXELS = 12_600_000;

export const jpegEncoder: RowEncoder = {
  placesOrientation: true,
  encode(source: RowSource, { quality, orientation, lowMemory, packedBytes }: EncodeOptions, sink: ResultSink): Promise<void> {
    const optimizeHuffman = lowMemory === undefined ? source.width * source.height <= JPEG_OPTIMIZE_MAX_PIXELS : !lowMemory;
    return writeJpeg(source, { quality, optimizeHuffman, packedBytes, orientation }, sink);
  },
};

