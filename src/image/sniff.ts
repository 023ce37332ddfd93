import { startsWith } from './bytes';
import type { ImageFormat } from './types';

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/**
 * The image format from magic bytes only (never from a name or a declared content type).
 * Returns null for everything the service does not read: GIF, BMP, TIFF, HEIC, SVG, PDF, unknown.
 */
export function detectFormat(bytes: Uint8Array): ImageFormat | null {
  if (startsWith(bytes, 0, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, 0, PNG_SIGNATURE)) return 'png';
  if (startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBP')) return 'webp';
  if (isAvifFtyp(bytes)) return 'avif';
  return null;
}

/**
 * An ISOBMFF file whose leading `ftyp` box names `avif` (still) or `avis` (sequence) as major
 * or compatible brand. HEIC (`heic`, `mif1` alone) is not AVIF.
 */
function isAvifFtyp(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || !startsWith(bytes, 4, 'ftyp')) return false;
  const boxSize = ((bytes[0] << 24) >>> 0) + ((bytes[1] << 16) | (bytes[2] << 8) | bytes[3]);
  if (boxSize < 16) return false; // size 0/1 (to end / 64-bit) are not used for ftyp in practice
  const end = Math.min(boxSize, bytes.length);
  const isAvifBrand = (at: number) => startsWith(bytes, at, 'avif') || startsWith(bytes, at, 'avis');
  if (isAvifBrand(8)) return true; // major brand; 12..16 is the minor version
  for (let at = 16; at + 4 <= end; at += 4) {
    if (isAvifBrand(at)) return true;
  }
  return false;
}
