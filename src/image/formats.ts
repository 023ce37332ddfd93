import type { Codec } from './codecs/codec';
import { avifCodec } from './codecs/avif';
import { jpegCodec } from './codecs/jpeg';
import { pngCodec } from './codecs/png';
import { webpCodec } from './codecs/webp';
import { readAvifDimensions } from './header/avif';
import { readJpegDimensions, verifyJpegStructure } from './header/jpeg';
import { readPngDimensions, verifyPngChunks } from './header/png';
import { readWebpDimensions } from './header/webp';
import { stripAvif } from './strip/avif';
import { stripJpeg } from './strip/jpeg';
import { stripPng } from './strip/png';
import { stripWebp } from './strip/webp';
import type { Dimensions, ImageFormat } from './types';

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
  codec: Codec;
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
    codec: jpegCodec,
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
    codec: pngCodec,
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
    codec: webpCodec,
  },
  avif: {
    name: 'avif',
    extension: 'avif',
    mimeType: 'image/avif',
    label: 'AVIF',
    readDimensions: readAvifDimensions,
    maxDimension: 65_536,
    supportsAlpha: true,
    stripMetadata: stripAvif,
    codec: avifCodec,
  },
};

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
