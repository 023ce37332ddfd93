import type { ImageHeader } from '../header';
import type { DecoderCost, EncoderCost } from '../memory-plan';
import type { DecodeOptions, RowEncoder, RowSource } from '../stages/rows';
import type { Dimensions } from '../types';

/**
 * A file whose header has been read (libvips' loader after header()): every later step takes its
 * facts from `header` and the format's own parse of the container kept behind it, never from a
 * second parse of the bytes.
 */
export interface ImageFile {
  /** The file (an error once released). */
  readonly bytes: Uint8Array;
  /** Its size, also once released. */
  readonly byteLength: number;
  /**
   * Lets go of the file once nothing will read it again (its rows all decoded, in a run that does
   * not decode twice): this object and its header keep no reference to it, so it can be collected.
   */
  release(): void;
  readonly header: ImageHeader;
  readonly format: FormatInfo;
  /** Integrity checks of the whole container that the header alone cannot make (PNG CRCs, JPEG EOI). */
  verify(): void;
  /** Lossless metadata removal, or null where the pipeline re-encodes instead. */
  readonly strip: (() => Uint8Array) | null;
  /** Opens a streaming decode; damage is AppError UNSUPPORTED_FORMAT, here or while rows are read. */
  decode(options: DecodeOptions): Promise<RowSource>;
  /** What the decoder holds (memory-plan.ts), as measured upper bounds; also for other sizes of the same image. */
  decodeCost(facts: DecodeFacts): DecoderCost;
  /**
   * Where the decoder has a low-memory mode (JPEG with several scans: coefficients packed), the
   * most it may pack for this file: its worst case (plan.ts chooseDecoderLowMemory).
   */
  readonly lowMemoryDecodeBytes: (() => number) | null;
  /** The decoder can hold a window of rows of this file instead of a whole picture (DecodeOptions.rowWindow). */
  readonly decodesInWindow: boolean;
  /** A windowed decode of this file cannot turn out to need the whole picture after all (AVIF: no intra block copy). */
  readonly windowAlwaysSuffices: boolean;
}

export interface DecodeFacts {
  inputBytes: number;
  stored: Dimensions;
  decode: DecodeOptions;
  decoded: Dimensions;
}

export interface EncodeFacts {
  output: Dimensions;
  quality: number;
  /** The rows can carry transparency. */
  alpha: boolean;
  grey: boolean;
  /** The encoder's low-memory mode (EncodeOptions.lowMemory). */
  lowMemory: boolean;
  /** A cap on the result below the format's own bound (plan.ts fitResultToBudget). */
  maxResultBytes?: number;
  /** The encoder's normal mode with its whole-image buffer packed, its values within this many bytes (EncodeOptions.packedBytes). */
  packedBytes?: number;
  /** EXIF orientation the encoder applies itself (1 unless it `placesOrientation`). */
  orientation: number;
}

/** One row of the registry (imgproxy's table of image types): what the pipeline knows of a format. */
export interface FormatInfo {
  /** Name used on the wire (`format` parameter, Result object, download URL). */
  name: 'jpg' | 'png' | 'webp' | 'avif';
  /** Other names the `format` parameter accepts for it. */
  aliases: readonly string[];
  extension: string;
  mimeType: string;
  label: string;
  /** The magic bytes (never a name or a declared content type). */
  sniff(bytes: Uint8Array): boolean;
  /** Reads the header: the record every later step uses. Damage is AppError UNSUPPORTED_FORMAT. */
  read(bytes: Uint8Array): ImageFile;
  /**
   * Estimated nanoseconds of work a pixel takes, for the run's turns (run-context.ts): to decode
   * (a stored pixel) and to encode (a pixel of the result) outside the codecs' own yield points.
   */
  work: { decode: number; encode: number };
  /**
   * What a whole decode and encode cost, codecs included, in nanoseconds a pixel (decoded, or of the
   * result) and ms an encoder instance: how long a run will take (pipeline.ts estimatedWorkMs), for
   * telling requests waiting behind it (src/admission). Measured on the 12 MP photo in workerd.
   */
  cost: { decode: number; encode: number; encoderMs: number };
  /** Shrink factors the decoder applies while decoding (JPEG's DCT scaling: 1, 2, 4, 8); [1] for none. */
  shrinkFactors: readonly number[];
  /** Largest width or height the format (or its encoder) can store. */
  maxDimension: number;
  /** Without alpha, transparent pixels are flattened onto white before encoding. */
  supportsAlpha: boolean;
  encoder: RowEncoder;
  /** What the encoder holds, output included. */
  encodeCost(facts: EncodeFacts): EncoderCost;
  /** Most bytes a result can have (measured on white noise, the least compressible picture). */
  resultBound(facts: EncodeFacts): number;
  /**
   * What decoding a result this format's encoder wrote holds in bands (the decoder's memory and
   * bands; the file itself is counted apart): quality=auto's trials and checks decode results.
   * Absent for PNG, which quality=auto does not encode.
   */
  resultDecodeCost?(facts: EncodeFacts): number;
  /**
   * A region of a file this format's encoder wrote decodes only the coded tiles it covers (an AVIF
   * grid): quality=auto reads the sample of a large result a tile at a time rather than by a decode
   * of the whole file.
   */
  decodesRegionsApart?: boolean;
  /**
   * The encoder codes each of the sample's tiles (on multiples of 16) as it codes them in the whole
   * picture, blocks apart (JPEG): a large result's tiles score what the sample's trial at that
   * quality scored, and quality=auto checks it without decoding the result (quality/auto-plan.ts).
   */
  trialScoresResultTiles?: boolean;
  /**
   * A lossless result's size is unknown until it is made and its bound is far above what photos
   * need: the plan may give it less than the bound (plan.ts fitResultToBudget).
   */
  resultMayBeCapped: boolean;
  /** The smallest share of the bound a capped result may be left (1/2 unless given). */
  resultCapFloor?: number;
  /**
   * The encoder's normal mode can keep its whole-image buffer packed within an allowance
   * (EncodeOptions.packedBytes; plan.ts withPackedEncode): JPEG's optimised tables.
   */
  packsEncoderBuffer?: boolean;
}

/** A format as its folder defines it, with its own header type; `defineFormat` makes the registry row. */
export interface FormatSpec<H extends ImageHeader> extends Omit<FormatInfo, 'read'> {
  readHeader(bytes: Uint8Array): H;
  verify?(bytes: Uint8Array, header: H): void;
  strip: ((bytes: Uint8Array, header: H) => Uint8Array) | null;
  decode(bytes: Uint8Array, header: H, options: DecodeOptions): Promise<RowSource>;
  decodeCost(header: H, facts: DecodeFacts): DecoderCost;
  lowMemoryDecodeBytes?(bytes: Uint8Array, header: H): number;
  decodesInWindow?(header: H): boolean;
  windowAlwaysSuffices?(header: H): boolean;
}

export function defineFormat<H extends ImageHeader>(spec: FormatSpec<H>): FormatInfo {
  const { readHeader, verify, strip, decode, decodeCost, lowMemoryDecodeBytes, decodesInWindow, windowAlwaysSuffices, ...info } = spec;
  const format: FormatInfo = {
    ...info,
    read(input) {
      const header = readHeader(input);
      const byteLength = input.byteLength;
      let file: Uint8Array | null = input;
      const bytes = () => {
        if (!file) throw new Error(`${info.name}: the file was released`);
        return file;
      };
      return {
        get bytes() {
          return bytes();
        },
        byteLength,
        release() {
          if (file) dropViewsOf(file.buffer, header);
          file = null;
        },
        header,
        format,
        verify: () => verify?.(bytes(), header),
        strip: strip && (() => strip(bytes(), header)),
        decode: (options) => decode(bytes(), header, options),
        decodeCost: (facts) => decodeCost(header, facts),
        lowMemoryDecodeBytes: lowMemoryDecodeBytes ? () => lowMemoryDecodeBytes(bytes(), header) : null,
        decodesInWindow: decodesInWindow?.(header) ?? false,
        windowAlwaysSuffices: windowAlwaysSuffices?.(header) ?? false,
      };
    },
  };
  return format;
}

/**
 * Replaces, anywhere in `value` (objects, arrays, maps), a view of `buffer` by an empty one: a
 * header's metadata (EXIF, XMP, ICC slices) are views of the file, and one of them would keep the
 * whole file alive. Only for a file whose rows are all decoded: the run reads no metadata after.
 */
function dropViewsOf(buffer: ArrayBufferLike, value: unknown, seen = new Set<object>()): unknown {
  if (ArrayBuffer.isView(value)) return value.buffer === buffer ? new Uint8Array(0) : value;
  if (typeof value !== 'object' || value === null || seen.has(value)) return value;
  seen.add(value);
  if (value instanceof Map) {
    for (const [key, entry] of value) {
      const kept = dropViewsOf(buffer, entry, seen);
      if (kept !== entry) value.set(key, kept);
    }
  } else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const kept = dropViewsOf(buffer, record[key], seen);
      if (kept !== record[key]) record[key] = kept;
    }
  }
  return value;
}
