import { AppError } from '../../errors';
import type { ImageFormat } from '../types';
import { avif } from './avif';
import type { FormatInfo, ImageFile } from './format';
import { jpeg } from './jpeg';
import { png } from './png';
import { webp } from './webp';

/** Everything the pipeline knows per format, in one table (imgproxy's registry of image types). */
export const FORMATS: Record<ImageFormat, FormatInfo> = { jpeg, png, webp, avif };

const ALL = Object.entries(FORMATS) as [ImageFormat, FormatInfo][];

/**
 * The image format from magic bytes only (never from a name or a declared content type).
 * Returns null for everything the service does not read: GIF, BMP, TIFF, HEIC, SVG, PDF, unknown.
 */
export function detectFormat(bytes: Uint8Array): ImageFormat | null {
  return ALL.find(([, info]) => info.sniff(bytes))?.[0] ?? null;
}

/** Sniffs the format and reads the header: the one parse of the container a run makes. */
export function readImage(bytes: Uint8Array): ImageFile {
  const format = detectFormat(bytes);
  if (!format) throw new AppError('UNSUPPORTED_FORMAT', 'The file is not a supported image: send a JPEG, PNG, WebP or AVIF file.');
  return FORMATS[format].read(bytes);
}

export const OUTPUT_FORMAT_NAMES = ['webp', 'avif', 'jpg', 'png'] as const;
export type OutputFormatName = (typeof OUTPUT_FORMAT_NAMES)[number];

/** The format behind a name of the `format` parameter or a download link (`jpg`, `jpeg`, `png`...), or null. */
export function formatByName(name: string): ImageFormat | null {
  return ALL.find(([, info]) => info.name === name || info.aliases.includes(name))?.[0] ?? null;
}

export type { DecodeFacts, EncodeFacts, FormatInfo, ImageFile } from './format';
