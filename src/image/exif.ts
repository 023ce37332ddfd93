import { startsWith, u16be, u16le, u32be, u32le } from './bytes';

/** EXIF Orientation: 1 is upright; 2-8 are the mirror/rotation cases of the TIFF spec. */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** The 6 bytes that start a JPEG APP1 Exif payload (and, from some writers, a WebP/PNG one). */
export const EXIF_HEADER = new Uint8Array([0x45, 0x78, 0x69, 0x66, 0x00, 0x00]); // "Exif\0\0"

const ORIENTATION_TAG = 0x0112;

/** An EXIF payload as the TIFF block it holds: the "Exif\0\0" some writers put first is dropped. */
export function tiffBlock(payload: Uint8Array): Uint8Array {
  return startsWith(payload, 0, EXIF_HEADER) ? payload.subarray(EXIF_HEADER.length) : payload;
}

/**
 * The Orientation of an EXIF block (TIFF bytes, whatever container carried them; libvips' exif.c
 * does the same for every format). Missing, unreadable or out-of-range values give 1; never throws.
 */
export function exifOrientation(tiff: Uint8Array | null): Orientation {
  if (!tiff) return 1;
  try {
    return tiffOrientation(tiff);
  } catch {
    return 1;
  }
}

/** Orientation tag of IFD0 in a TIFF block, either byte order; reads past the end throw (caught above). */
function tiffOrientation(tiff: Uint8Array): Orientation {
  const little = startsWith(tiff, 0, 'II');
  if (!little && !startsWith(tiff, 0, 'MM')) return 1;
  const u16 = little ? u16le : u16be;
  const u32 = little ? u32le : u32be;
  if (u16(tiff, 2) !== 42) return 1;
  const ifd = u32(tiff, 4);
  const count = u16(tiff, ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + 12 * i;
    if (u16(tiff, entry) !== ORIENTATION_TAG) continue;
    const type = u16(tiff, entry + 2);
    const value = type === 3 ? u16(tiff, entry + 8) : type === 4 ? u32(tiff, entry + 8) : 0;
    return value >= 1 && value <= 8 ? (value as Orientation) : 1;
  }
  return 1;
}

/**
 * A minimal big-endian TIFF block holding only IFD0 with the Orientation entry (26 bytes), to be
 * written after "Exif\0\0" in a JPEG APP1 (or as-is in a PNG eXIf / WebP EXIF chunk).
 */
export function orientationOnlyExif(orientation: Orientation): Uint8Array {
  return new Uint8Array([
    0x4d, 0x4d, 0x00, 0x2a, // "MM", 42
    0x00, 0x00, 0x00, 0x08, // IFD0 at offset 8
    0x00, 0x01, // one entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, // Orientation, SHORT, count 1
    0x00, orientation, 0x00, 0x00, // value, padded to 4 bytes
    0x00, 0x00, 0x00, 0x00, // no next IFD
  ]);
}
