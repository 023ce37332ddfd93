import type { ImageFormat } from '../types';
import { stripJpeg } from './jpeg';
import { stripPng } from './png';
import { stripWebp } from './webp';

/**
 * Lossless metadata removal (EXIF, XMP, ICC, text): container segments/chunks are dropped, the
 * compressed image data is copied byte for byte, nothing is re-encoded. Throws AppError
 * UNSUPPORTED_FORMAT for a damaged container. AVIF is not handled here.
 */
export function stripMetadata(format: ImageFormat, bytes: Uint8Array): Uint8Array {
  switch (format) {
    case 'jpeg':
      return stripJpeg(bytes);
    case 'png':
      return stripPng(bytes);
    case 'webp':
      return stripWebp(bytes);
    case 'avif':
      throw new Error('stripMetadata: AVIF box stripping is not implemented in src/image/strip');
  }
}
