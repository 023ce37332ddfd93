import { avifEncoder } from './avif/encode';
import { avifEncodedBytes, avifEncoderPeakBytes } from './avif/encode-memory';
import { AVIF_BAND_ROWS, avifDecoder } from './avif/decode';
import { avifDecodeMemory, DAV1D_BASE_BYTES } from './avif/memory';
import { verifyAvifContainer } from './avif/verify';
import { jpegDecoder, jpegEncoder } from './jpeg/libjpeg';
import { jpegDecodeWasmBytes, jpegEncodeWasmBytes } from './jpeg/memory';
import { webpDecoder } from './webp/decode';
import { webpEncoder } from './webp/encode';
import { WEBP_BAND_ROWS, webpDecoderWasmBytes, webpEncodedBytesMax, webpEncoderWasmBytes, webpStreamOf } from './webp/memory';
import { pixelsOf, resultBytes, type DecoderCost, type EncoderCost } from '../memory-plan';
import type { DecodeOptions, RowDecoder, RowEncoder } from '../stages/rows';
import { readAvifDimensions } from './avif/header';
import { readJpegDimensions, readJpegFrame, verifyJpegStructure } from './jpeg/header';
import { pngMayHaveAlpha, readPngDimensions, verifyPngChunks } from './png/header';
import { readWebpDimensions, webpMayHaveAlpha } from './webp/header';
import { pngDecoder } from './png/decode';
import { pngEncoder, pngFileBound } from './png/encode';
import { pngDecodeBytes, pngEncodeBytes, pngOutputChannels } from './png/memory';
import { readPngStructure } from './png/structure';
import { stripAvif } from './avif/strip';
import { stripJpeg } from './jpeg/strip';
import { stripPng } from './png/strip';
import { stripWebp } from './webp/strip';
import type { Dimensions, ImageFormat } from '../types';

export interface FormatInfo {
  /** Name used on the wire (`format` parameter, Result object, download URL). */
  name: 'jpg' | 'png' | 'webp' | 'avif';
  extension: string;
  mimeType: string;
  label: string;
  /** Width and height as stored in the container header, without decoding. */
  readDimensions(bytes: Uint8Array): Dimensions;
  /** Integrity checks the container allows before any decode (PNG CRCs, JPEG EOI). */
  verifyContainer?(bytes: Uint8Array): void;
  /** Largest width or height the format (or its encoder) can store. */
  maxDimension: number;
  /** Without alpha, transparent pixels are flattened onto white before encoding. */
  supportsAlpha: boolean;
  /** Lossless metadata removal; null = not available, the pipeline re-encodes instead. */
  stripMetadata: ((bytes: Uint8Array) => Uint8Array) | null;
  /** Whether the header allows transparent pixels (false only where it rules them out). */
  mayHaveAlpha(bytes: Uint8Array): boolean;
  decoder: RowDecoder;
  encoder: RowEncoder;
  /** What the decoder holds (memory-plan.ts), from the header, measured as upper bounds. */
  decodeCost(facts: DecodeFacts): DecoderCost;
  /** What the encoder holds, output included. */
  encodeCost(facts: EncodeFacts): EncoderCost;
  /** Most bytes a result can have (measured on white noise, the least compressible picture). */
  resultBound(facts: EncodeFacts): number;
}

export interface DecodeFacts {
  input: Uint8Array;
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
  /** A cap on the result below the format's own bound (plan.ts fitResultToBudget; PNG only). */
  maxResultBytes?: number;
}

/** Everything the pipeline knows per format, in one table. */
export const FORMATS: Record<ImageFormat, FormatInfo> = {
  jpeg: {
    name: 'jpg',
    extension: 'jpg',
    mimeType: 'image/jpeg',
    label: 'JPEG',
    readDimensions: readJpegDimensions,
    verifyContainer: verifyJpegStructure,
    maxDimension: 65_535,
    supportsAlpha: false,
    stripMetadata: stripJpeg,
    mayHaveAlpha: () => false,
    decoder: jpegDecoder,
    encoder: jpegEncoder,
    // Bands hand out views into the instance's memory: baseline files 1 MiB whatever their size,
    // files with several scans 2 bytes a sample for the coefficients (3 a pixel for 4:2:0).
    decodeCost: ({ input, stored, decode }) => {
      const streaming = jpegDecodeWasmBytes({ ...readJpegFrame(input), ...stored }, decode.shrink);
      return { open: streaming, streaming };
    },
    // Optimised Huffman tables (sharp's bytes exactly) need the coefficients of the whole image,
    // 3 bytes a pixel; the low-memory mode writes libjpeg's standard tables from about 1 MiB.
    encodeCost: ({ output, quality, grey, lowMemory }) => ({
      streaming: jpegEncodeWasmBytes(output.width, output.height, grey ? 1 : 3, !lowMemory) + resultBytes('jpeg', pixelsOf(output), quality),
    }),
    resultBound: ({ output, quality }) => resultBytes('jpeg', pixelsOf(output), quality),
  },
  png: {
    name: 'png',
    extension: 'png',
    mimeType: 'image/png',
    label: 'PNG',
    readDimensions: readPngDimensions,
    verifyContainer: verifyPngChunks,
    maxDimension: 2 ** 31 - 1,
    supportsAlpha: true,
    stripMetadata: stripPng,
    mayHaveAlpha: pngMayHaveAlpha,
    decoder: pngDecoder,
    encoder: pngEncoder,
    // Rows in JavaScript and the runtime's inflaters (one per Adam7 pass), whatever the size.
    decodeCost: ({ input, stored, decode }) => {
      const bytes = pngDecodeBytes({ ...readPngStructure(input), ...stored }, decode.region?.width ?? stored.width);
      return { open: bytes, streaming: bytes };
    },
    // Rows, the runtime's deflate and the file (as large as the filtered rows at worst).
    encodeCost: (facts) => ({ streaming: pngEncodeBytes(facts.output.width, facts.output.height, pngOutputChannels(facts.alpha, facts.grey), pngResultBound(facts)) }),
    resultBound: (facts) => pngResultBound(facts),
  },
  webp: {
    name: 'webp',
    extension: 'webp',
    mimeType: 'image/webp',
    label: 'WebP',
    readDimensions: readWebpDimensions,
    maxDimension: 16_383,
    supportsAlpha: true,
    stripMetadata: stripWebp,
    mayHaveAlpha: webpMayHaveAlpha,
    decoder: webpDecoder,
    encoder: webpEncoder,
    // libwebp's instance (a few rows of state for a lossy file, the whole ARGB image for a lossless
    // one) and in JavaScript a band of canvas width for an animation's frame and one for a crop.
    decodeCost: ({ input, stored }) => {
      const stream = { ...webpStreamOf(input), ...stored };
      const bytes = webpDecoderWasmBytes(stream) + 2 * WEBP_BAND_ROWS * stored.width * 4;
      return { open: bytes, streaming: bytes };
    },
    // libwebp holds the whole picture as YUV 4:2:0 and its work; the file is written into the result buffer.
    encodeCost: (facts) => ({
      streaming: webpEncoderWasmBytes(facts.output.width, facts.output.height, facts.alpha, facts.quality, facts.lowMemory) + webpResultBound(facts),
    }),
    resultBound: (facts) => webpResultBound(facts),
  },
  avif: {
    name: 'avif',
    extension: 'avif',
    mimeType: 'image/avif',
    label: 'AVIF',
    readDimensions: readAvifDimensions,
    // The checks a decode would make, for the lossless strip too (it must not report what cannot be decoded).
    verifyContainer: (bytes) => void verifyAvifContainer(bytes),
    maxDimension: 65_536,
    supportsAlpha: true,
    stripMetadata: stripAvif,
    // Only an alpha auxiliary image (or track) gives transparency: without one the rows are opaque.
    mayHaveAlpha: (bytes) => verifyAvifContainer(bytes).alpha !== null,
    decoder: avifDecoder,
    encoder: avifEncoder,
    // dav1d holds a decoded picture (one row of tiles of a grid) and the item's data; rows are converted band by band.
    decodeCost: ({ input, stored, decoded }) => {
      const container = verifyAvifContainer(input); // with the AV1 sequence headers read: format and film grain
      const { wasmBytes, jsBytes } = avifDecodeMemory(container, decoded.width, AVIF_BAND_ROWS);
      // The memory guard asks about other sizes of the same image too (the largest that fits).
      const bytes = DAV1D_BASE_BYTES + (wasmBytes + jsBytes - DAV1D_BASE_BYTES) * (pixelsOf(stored) / pixelsOf(container.color.size));
      return { open: bytes, streaming: bytes };
    },
    encodeCost: ({ output, alpha, quality }) => ({ streaming: avifEncoderPeakBytes(output.width, output.height, alpha, quality) }),
    resultBound: ({ output, alpha, quality }) => avifEncodedBytes(output.width, output.height, alpha, quality),
  },
};

function pngResultBound({ output, alpha, grey, maxResultBytes = Infinity }: EncodeFacts): number {
  return Math.min(pngFileBound(output.width, output.height, pngOutputChannels(alpha, grey)), maxResultBytes);
}

function webpResultBound({ output, alpha, quality }: EncodeFacts): number {
  return Math.min(resultBytes('webp', pixelsOf(output), quality), webpEncodedBytesMax(output.width, output.height, alpha, quality));
}

/**
 * Header size of a file of a known format (EXIF orientation and AVIF irot not applied).
 * Throws AppError UNSUPPORTED_FORMAT for a truncated, corrupt or zero-sized header.
 */
export function readDimensions(format: ImageFormat, bytes: Uint8Array): Dimensions {
  return FORMATS[format].readDimensions(bytes);
}

export const OUTPUT_FORMAT_NAMES = ['webp', 'avif', 'jpg', 'png'] as const;
export type OutputFormatName = (typeof OUTPUT_FORMAT_NAMES)[number];

export function formatFromName(name: OutputFormatName): ImageFormat {
  return name === 'jpg' ? 'jpeg' : name;
}

/** The format behind a wire name (`jpg`, `png`, ...), or null for anything else. */
export function formatInfoByName(name: string): FormatInfo | null {
  return Object.values(FORMATS).find((info) => info.name === name) ?? null;
}
