import { ResultBuffer } from '../../result-buffer';
import type { ResultSink } from '../../result-sink';
import { copyPixels } from '../../run-context';
import type { EncodeOptions, RowEncoder, RowSource } from '../../stages/rows';
import { PNG_SIGNATURE, pngChunk } from './header';
import { openPngZlib, statusError } from './png-zlib';
import { GREY, GREY_ALPHA, RGB, RGBA } from './structure';

/*
 * PNG encoding from bands on our zlib and libdeflate build (codecs/png/encoder.c): each band is
 * copied into the WebAssembly memory, where its rows are packed to the output's channels, filtered
 * and deflated by libdeflate in pieces of DEFLATE_PIECE_BYTES; the compressed bytes come back as
 * whole IDAT chunks, written into the result's sink as they come and drained after every band.
 * Held: libdeflate's two compressors, a piece and its compressed form, a few rows, one band and one
 * chunk, and what the sink keeps.
 */

/** Largest IDAT chunk data (encoder.c's IDAT_BYTES). */
export const IDAT_BYTES = 64 * 1024;
/** Filtered bytes libdeflate compresses at once (encoder.c's PIECE_BYTES). */
export const DEFLATE_PIECE_BYTES = 256 * 1024;
/** Rows of RGBA the encoder takes into its memory at once. */
export const PNG_ENCODE_BAND_ROWS = 16;

/**
 * How each row's filter is chosen (PNG spec, 9.2): 'adaptive' is libpng's heuristic, the filter
 * whose output has the smallest sum of absolute values (bytes read as signed), over all five
 * filters; 'cheap-adaptive' the same over None, Sub and Up; the others one filter for every row
 * ('none' is what sharp's default `png()` does).
 */
export type FilterStrategy = 'adaptive' | 'cheap-adaptive' | 'none' | 'sub' | 'up' | 'average' | 'paeth';
const FILTER_CHOICE: Record<FilterStrategy, number> = { adaptive: -1, 'cheap-adaptive': -2, none: 0, sub: 1, up: 2, average: 3, paeth: 4 };

export interface PngEncodeSettings {
  filter: FilterStrategy;
  /** libdeflate's compression level, 1-9 (encoder.c). */
  level: number;
  /**
   * The level, 1-9, for a piece that follows one that compressed to a quarter of its size or less
   * (flat areas, text, repeats: a screenshot, not a photo); 0: always `level`.
   */
  graphicLevel: number;
  /** Most bytes the file may have (the memory plan's bound, EncodeOptions.maxBytes); unset: pngFileBound. */
  maxBytes?: number;
}

/**
 * None, Sub or Up by row at libdeflate's level 1, chosen on numbers (docs/performance.md, PNG): on
 * the 12 MP photo 0.64 of the bytes of sharp's default (no filter, zlib level 6) in half its time;
 * Up alone is 1.6% larger there and 11% larger on a text screenshot for no measurable gain in
 * time; level 2 is 1.5% smaller on the photo and 55% slower. Flat pieces at level 6: a text
 * screenshot 11% smaller than at level 1 (sharp's size) for 10-20 ms more at 2.7 MP (level 4: 5%;
 * level 9: 12% for 60 ms more); a photo's pieces compress to about half and never take it.
 */
export const DEFAULT_PNG_ENCODE: PngEncodeSettings = { filter: 'cheap-adaptive', level: 1, graphicLevel: 6 };

export const pngEncoder: RowEncoder = {
  placesOrientation: false,
  encode: (source: RowSource, options: EncodeOptions, sink: ResultSink) => {
    if (options.orientation !== 1) throw new Error(`png: orientation ${options.orientation} must be applied before encoding`);
    return writePng(source, DEFAULT_PNG_ENCODE, sink);
  },
};

/** The output's colour type: RGB when opaque, grey when grey, RGBA otherwise; always 8 bits. */
export function pngColourType(source: Pick<RowSource, 'alpha' | 'grey'>): number {
  if (source.grey) return source.alpha ? GREY_ALPHA : GREY;
  return source.alpha ? RGBA : RGB;
}

const CHANNELS: Record<number, number> = { [GREY]: 1, [GREY_ALPHA]: 2, [RGB]: 3, [RGBA]: 4 };

/**
 * Upper bound of the file's bytes: the zlib stream of the filtered rows, each piece stored at
 * worst (libdeflate's bound: blocks of at least 5,000 bytes with 5 bytes of header each, a byte of
 * padding, the empty stored block that ends every piece but the last, and one empty piece more
 * when the rows fill the last), its header and Adler-32, IDAT framing, signature, IHDR and IEND.
 */
export function pngFileBound(width: number, height: number, channels: number): number {
  const filtered = height * (1 + width * channels);
  const pieces = Math.floor(filtered / DEFLATE_PIECE_BYTES) + 1;
  const deflated = filtered + 5 * Math.ceil(filtered / 5000) + 12 * pieces + 6;
  return 8 + 25 + deflated + 12 * Math.ceil(deflated / IDAT_BYTES) + 12;
}

/** The file in memory (at most `settings.maxBytes`, else pngFileBound). */
export async function encodePng(source: RowSource, settings: PngEncodeSettings = DEFAULT_PNG_ENCODE): Promise<Uint8Array> {
  const bound = pngFileBound(source.width, source.height, CHANNELS[pngColourType(source)]);
  const output = new ResultBuffer(Math.min(bound, settings.maxBytes ?? bound));
  await writePng(source, settings, output);
  return output.bytes();
}

/** encodePng into `output`, drained after every band the encoder takes. */
export async function writePng(source: RowSource, settings: PngEncodeSettings, output: ResultSink): Promise<void> {
  let encoder = 0;
  let wasm: Awaited<ReturnType<typeof openPngZlib>> | null = null;
  try {
    if (source.model !== 'rgba') throw new Error(`png: cannot encode ${source.model} bands`);
    const { width, height } = source;
    const colourType = pngColourType(source);
    output.write(Uint8Array.from(PNG_SIGNATURE));
    output.write(pngChunk('IHDR', [...u32(width), ...u32(height), 8, colourType, 0, 0, 0]));
    wasm = await openPngZlib('png-encoder', { pngWriteOutput: (chunk) => output.write(chunk) });
    const lib = wasm.instance;
    encoder = lib._encoder_create(width, CHANNELS[colourType], settings.level, FILTER_CHOICE[settings.filter], settings.graphicLevel);
    const check = (status: number) => {
      if (status < 0 || encoder === 0) throw statusError(lib, encoder ? status : -2, encoder ? lib._encoder_message(encoder) : 0);
    };
    check(0);
    let y = 0;
    for (let band = await source.read(); band; band = await source.read()) {
      if (band.y !== y) throw new Error(`png: band at row ${band.y}, expected ${y}`);
      // At most PNG_ENCODE_BAND_ROWS rows at once, whatever the source's bands (memory.ts counts that many).
      for (let row = 0; row < band.rows; row += PNG_ENCODE_BAND_ROWS) {
        const rows = Math.min(PNG_ENCODE_BAND_ROWS, band.rows - row);
        const pointer = lib._encoder_band(encoder, rows);
        if (pointer === 0) throw statusError(lib, -2, lib._encoder_message(encoder));
        copyPixels(() => lib.HEAPU8.set(band.data.subarray(row * width * 4, (row + rows) * width * 4), pointer));
        check(lib._encoder_write(encoder, rows));
        await output.drain();
      }
      y += band.rows;
    }
    if (y !== height) throw new Error(`png: the source gave ${y} of ${height} rows`);
    check(lib._encoder_finish(encoder));
    output.write(pngChunk('IEND'));
    await output.drain();
  } finally {
    if (encoder) wasm!.instance._encoder_destroy(encoder);
    wasm?.release();
    source.close();
  }
}

const u32 = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
