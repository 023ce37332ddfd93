import type { Region } from '../operations';
import type { ResultSink } from '../result-sink';
import type { RgbaImage } from '../types';

/*
 * The pipeline passes pixels as bands of rows, top to bottom, the way libvips passes regions: a
 * decoder hands out a few rows at a time, every stage (colour, crop, resize, flatten, orientation)
 * holds only the window of rows it needs, and the encoder takes bands as they come. No stage holds
 * a whole frame unless the output order needs one (orientation 3-8 for an encoder that writes top
 * to bottom).
 */

/** A run of consecutive rows of 8-bit pixels, 4 bytes each (RGBA, or CMYK inks). */
export interface Band {
  /** Index of the band's first row in the image. */
  y: number;
  rows: number;
  /**
   * rows * width * 4 bytes, row-major, no padding. It belongs to the source and is valid until its
   * next `read()`; the consumer may change it in place (colour conversion and flattening do).
   */
  data: Uint8Array;
}

/** Bands never have more rows than this (the memory plan counts stage bands at this height). */
export const BAND_ROWS_MAX = 64;

export interface RowSource {
  readonly width: number;
  readonly height: number;
  /** 'cmyk': ink amounts (0 = none, 255 = full), Adobe inversion undone; the colour stage makes them sRGB RGBA. */
  readonly model: 'rgba' | 'cmyk';
  /** False when every alpha is 255 by construction (JPEG; PNG without alpha or tRNS; WebP without alpha). */
  readonly alpha: boolean;
  /** True when R = G = B everywhere by construction (a one-component JPEG, a grey PNG). */
  readonly grey: boolean;
  /** The next band, top to bottom, or null once all `height` rows were handed out. */
  read(): Promise<Band | null>;
  /**
   * Bytes of JavaScript buffers this source and the sources it reads from hold now (band buffers,
   * row windows, frames). WebAssembly memories are counted separately (codecs/wasm-memory.ts).
   */
  heldBytes(): number;
  /** Releases codec instances and buffers; safe to call more than once and after an error. */
  close(): void;
}

export interface DecodeOptions {
  /**
   * Shrink-on-load: decode at 1/shrink of the stored size in each direction (output side =
   * ceil(side / shrink), as libjpeg rounds). Only a value from the decoder's `shrinkFactors`.
   */
  shrink: number;
  /**
   * The rows and columns to decode, in stored coordinates (before orientation) of the picture at
   * 1/shrink; null = all. The source then has exactly region.width x region.height.
   */
  region: Region | null;
  /**
   * The decoder's low-memory mode, where it has one (a JPEG with several scans keeps its
   * coefficients packed instead of 128 bytes a block), packing at most `maxBytes`: a file that
   * needs more fails (plan.ts chooseDecoderLowMemory).
   */
  lowMemory?: { maxBytes: number };
  /**
   * Decode a large single frame into a window of rows instead of a whole picture (AVIF: dav1d's
   * buffer holds a few rows of superblocks; plan.ts fitToBudget), where the file allows it
   * (ImageFile.decodesInWindow).
   */
  rowWindow?: boolean;
}

export interface EncodeOptions {
  /** 1..100; lossless encoders ignore it. */
  quality: number;
  /**
   * Most bytes the file may have where the plan capped it below the format's bound
   * (fitResultToBudget): an encoder that holds room for its result (libwebp) takes no more.
   * The result's sink enforces the same cap.
   */
  maxBytes?: number;
  /**
   * The plan asks for the encoder's low-memory mode where it has one (JPEG: libjpeg's standard
   * Huffman tables instead of a whole-image coefficient buffer). Unset: the encoder decides.
   */
  lowMemory?: boolean;
  /**
   * The normal mode with its whole-image buffer packed, the packed values within this many bytes
   * (JPEG: the optimised tables' coefficients, codecs/jpeg/memory.c). A picture that needs more
   * fails with PackedAllowanceExceeded before any of the file is written.
   */
  packedBytes?: number;
  /**
   * Encode as the encoder would a picture of this many pixels where its effort follows the size
   * (AVIF's speed): quality=auto's sample is tried as the whole picture will be encoded. Unset: the
   * source's own size.
   */
  effortPixels?: number;
  /**
   * EXIF orientation still to apply: always 1 unless the encoder `placesOrientation`, in which case
   * it writes each band where a viewer sees it (the source's width and height are then stored
   * sizes, swapped in the result for 5-8).
   */
  orientation: number;
}

export interface RowEncoder {
  /** True when the encoder holds its whole picture anyway and can write bands anywhere in it (WebP). */
  readonly placesOrientation: boolean;
  /**
   * Reads `source` to its end and writes the file into `sink` as it is made, waiting for the sink
   * (`drain`) between bands; closes the source.
   */
  encode(source: RowSource, options: EncodeOptions, sink: ResultSink): Promise<void>;
}

/**
 * The rows of a picture held whole, in bands of BAND_ROWS_MAX (views into it: a consumer that
 * changes a band in place changes the picture, which is read once).
 */
export function pictureRows(picture: RgbaImage & { data: Uint8Array }, traits: Pick<RowSource, 'model' | 'alpha' | 'grey'>): RowSource {
  const { width, height } = picture;
  let data: Uint8Array | null = picture.data;
  let y = 0;
  return {
    width,
    height,
    ...traits,
    async read() {
      if (data === null || y >= height) return null;
      const rows = Math.min(BAND_ROWS_MAX, height - y);
      const band = { y, rows, data: data.subarray(y * width * 4, (y + rows) * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => (data === null ? 0 : data.byteLength),
    close: () => {
      data = null;
    },
  };
}

/** `source` with its first band read now (and handed out again by the first `read()`). */
export async function withFirstBand(source: RowSource): Promise<RowSource> {
  let first: Band | null | undefined = await source.read();
  return {
    ...forward(source),
    read: () => {
      if (first === undefined) return source.read();
      const band = first;
      first = undefined;
      return Promise.resolve(band);
    },
  };
}

/**
 * `source` closed as soon as it has handed out its last row, and no longer referenced, so that
 * everything behind it (the decoder, the stages, the file they read) can be collected while the
 * reader still works on what it got; `onEnd` is called then.
 */
export function closedAtEnd(source: RowSource, onEnd: () => void): RowSource {
  let upstream: RowSource | null = source;
  const end = () => {
    upstream?.close();
    upstream = null;
  };
  return {
    ...traitsOf(source),
    read: async () => {
      if (!upstream) return null;
      const band = await upstream.read();
      if (!band) {
        end();
        onEnd();
      }
      return band;
    },
    heldBytes: () => upstream?.heldBytes() ?? 0,
    close: end,
  };
}

/** A source's size and what its bands hold. */
function traitsOf({ width, height, model, alpha, grey }: RowSource): Pick<RowSource, 'width' | 'height' | 'model' | 'alpha' | 'grey'> {
  return { width, height, model, alpha, grey };
}

/** A stage that changes bands in place starts from this: everything as its source, then overrides. */
export function forward(source: RowSource): RowSource {
  return {
    ...traitsOf(source),
    read: () => source.read(),
    heldBytes: () => source.heldBytes(),
    close: () => source.close(),
  };
}

/**
 * An encoder's packed buffer needed more than its allowance (EncodeOptions.packedBytes), which no
 * bound can promise (white noise at high quality packs to no less than the buffer itself); nothing
 * of the file was written, and the run is done again in the encoder's low-memory mode (pipeline.ts).
 */
export class PackedAllowanceExceeded extends Error {
  constructor(detail: string) {
    super(`the packed buffer needed more than its allowance: ${detail}`);
    this.name = 'PackedAllowanceExceeded';
  }
}
