import type { Dimensions, ImageFormat } from '../types';
import { readAvifDimensions } from './avif';
import { readJpegDimensions } from './jpeg';
import { readPngDimensions, verifyPngChunks } from './png';
import { readWebpDimensions } from './webp';

/**
 * Width and height as stored in the container header, without decoding (so a pixel bomb can be
 * rejected first). Throws AppError UNSUPPORTED_FORMAT for a truncated, corrupt or zero-sized header.
 * The size is the stored one: EXIF orientation or AVIF irot is not applied.
 */
export function readDimensions(format: ImageFormat, bytes: Uint8Array): Dimensions {
  switch (format) {
    case 'jpeg':
      return readJpegDimensions(bytes);
    case 'png':
      return readPngDimensions(bytes);
    case 'webp':
      return readWebpDimensions(bytes);
    case 'avif':
      return readAvifDimensions(bytes);
  }
}

/**
 * Checks what the container itself can prove before any decode: PNG carries a CRC per chunk.
 * JPEG, WebP and AVIF have no checksums; their damage surfaces in the decoder.
 */
export function verifyContainer(format: ImageFormat, bytes: Uint8Array): void {
  if (format === 'png') verifyPngChunks(bytes);
}
