import { startsWith, u16be, u16le, u32be, u32le, u8 } from './bytes';
import { primaryItemProperties } from './formats/avif/header';
import { jpegSegments, SOS } from './formats/jpeg/header';
import { pngChunks } from './formats/png/header';
import { webpChunks } from './formats/webp/header';
import type { ImageFormat } from './types';

/** EXIF Orientation: 1 is upright; 2-8 are the mirror/rotation cases of the TIFF spec. */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** The 6 bytes that start a JPEG APP1 Exif payload (and, from some writers, a WebP/PNG one). */
export const EXIF_HEADER = new Uint8Array([0x45, 0x78, 0x69, 0x66, 0x00, 0x00]); // "Exif\0\0"

const ORIENTATION_TAG = 0x0112;

/**
 * The EXIF Orientation of an image: JPEG APP1 "Exif", PNG eXIf, WebP EXIF; for AVIF the primary
 * item's `irot`/`imir` properties expressed as the equivalent EXIF value (see `avifOrientation`).
 * Missing, unreadable or out-of-range values give 1; never throws.
 */
export function readOrientation(format: ImageFormat, bytes: Uint8Array): Orientation {
  try {
    if (format === 'avif') return avifOrientation(bytes);
    const tiff = findExif(format, bytes);
    return tiff ? tiffOrientation(tiff) : 1;
  } catch {
    return 1;
  }
}

/** The TIFF bytes of the first EXIF block, or null. */
function findExif(format: ImageFormat, bytes: Uint8Array): Uint8Array | null {
  if (format === 'jpeg') {
    for (const s of jpegSegments(bytes)) {
      if (s.marker === SOS) break;
      if (s.marker === 0xe1 && startsWith(bytes.subarray(0, s.end), s.payload, EXIF_HEADER)) {
        return bytes.subarray(s.payload + EXIF_HEADER.length, s.end);
      }
    }
  } else if (format === 'png') {
    for (const c of pngChunks(bytes)) {
      if (c.type === 'eXIf') return withoutExifHeader(bytes.subarray(c.data, c.data + c.length));
    }
  } else if (format === 'webp') {
    for (const c of webpChunks(bytes)) {
      if (c.type === 'EXIF') return withoutExifHeader(bytes.subarray(c.data, c.data + c.length));
    }
  }
  return null;
}

/**
 * EXIF orientation equal to HEIF `irot` (angle x 90 degrees anticlockwise) followed by `imir`, by
 * [angle][mirror]: mirror 0 = none, 1 = imir axis 0, 2 = imir axis 1.
 *
 * `imir` axis follows ISO/IEC 23008-12:2022, which is what libavif's `avifImageMirror` documents: axis 0
 * exchanges top and bottom (EXIF 4), axis 1 exchanges left and right (EXIF 2). The 2017 edition spoke
 * of a vertical (0) / horizontal (1) mirror *axis*, which reads as the opposite flips; not followed.
 *
 * Order: rotation first, then mirror, as MIAF (ISO/IEC 23000-22) 7.3.6.7 requires (clap, irot, imir).
 * libavif does not record the `ipma` order: it only reports that irot/imir are present, and its own
 * EXIF-to-irot/imir mapping assumes irot before imir; so the `ipma` order is ignored here as well.
 * libavif (and so the service's decoder) never applies either to the decoded pixels, so the
 * pipeline's `applyOrientation` does, as for a JPEG.
 */
const IROT_IMIR_TO_EXIF: readonly (readonly Orientation[])[] = [
  [1, 4, 2], // no rotation
  [8, 5, 7], // 90 anticlockwise
  [3, 2, 4], // 180
  [6, 7, 5], // 270 anticlockwise (90 clockwise)
];

function avifOrientation(bytes: Uint8Array): Orientation {
  const properties = primaryItemProperties(bytes) ?? [];
  const irot = properties.find((p) => p.type === 'irot');
  const imir = properties.find((p) => p.type === 'imir');
  const angle = irot ? u8(bytes.subarray(0, irot.end), irot.body) & 3 : 0;
  const mirror = imir ? 1 + (u8(bytes.subarray(0, imir.end), imir.body) & 1) : 0;
  return IROT_IMIR_TO_EXIF[angle][mirror];
}

function withoutExifHeader(data: Uint8Array): Uint8Array {
  return startsWith(data, 0, EXIF_HEADER) ? data.subarray(EXIF_HEADER.length) : data;
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
