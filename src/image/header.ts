import type { Orientation } from './exif';
import type { ImageFormat } from './types';

/**
 * How a file describes its colour: an ICC profile (PNG's still zlib-compressed, inflated when the
 * colour stage needs it), or H.273 code points (AVIF `nclx`, PNG `cICP`).
 */
export type ColourDescription =
  | { kind: 'icc'; bytes: Uint8Array }
  | { kind: 'icc-deflated'; bytes: Uint8Array }
  | { kind: 'cicp'; primaries: number; transfer: number };

/**
 * What one read of a file's header tells, as libvips' loaders set it on the image once
 * (jpeg2vips.c read_jpeg_header): each format's `header.ts` is the only code that parses its
 * container, and every later step takes its facts from this record.
 */
export interface ImageHeader {
  format: ImageFormat;
  /** Size as stored, before orientation: a JPEG's frame, an AVIF's clean aperture, a WebP animation's canvas. */
  width: number;
  height: number;
  /** EXIF orientation: from the EXIF blob (exif.ts), or AVIF's irot/imir expressed as one. */
  orientation: Orientation;
  /** The file's colour descriptions in the order they rule: the colour stage takes the first it can read. */
  colour: ColourDescription[];
  /** Transparent pixels are possible (false only where the header rules them out). */
  alpha: boolean;
  /** Bits per sample as stored. */
  bitDepth: number;
  /** The EXIF block (TIFF bytes) and the XMP packet, as views of the file; null when absent. */
  exif: Uint8Array | null;
  xmp: Uint8Array | null;
}
