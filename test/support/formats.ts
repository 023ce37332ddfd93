/**
 * The format registry as the old per-format functions tests were written against: each reads the
 * header first (the one parse), as the pipeline does. Safe in Node and in workerd.
 */
import { AppError } from '../../src/errors';
import type { Orientation } from '../../src/image/exif';
import type { ImageHeader } from '../../src/image/header';
import { readColourProfile, type ColourProfile } from '../../src/image/stages/colour';
import { inflateProfile } from '../../src/image/stages/colour/inflate-profile';
import type { AvifContainer } from '../../src/image/formats/avif/container';
import type { AvifHeader } from '../../src/image/formats/avif/header';
import { FORMATS, readImage } from '../../src/image/formats/index';
import type { DecodeOptions, RowSource } from '../../src/image/stages/rows';
import type { Dimensions, ImageFormat } from '../../src/image/types';

/** Width and height as the header of a `format` file states them (before orientation); damage throws. */
export function readDimensions(format: ImageFormat, bytes: Uint8Array): Dimensions {
  const { width, height } = FORMATS[format].read(bytes).header;
  return { width, height };
}

/** The header's orientation, or 1 for a file whose container cannot be read at all. */
export function readOrientation(format: ImageFormat, bytes: Uint8Array): Orientation {
  try {
    return FORMATS[format].read(bytes).header.orientation;
  } catch (error) {
    if (error instanceof AppError) return 1;
    throw error;
  }
}

/** The lossless metadata strip of a `format` file, from its header (the pipeline runs the container checks first). */
export function stripped(format: ImageFormat, bytes: Uint8Array): Uint8Array {
  return FORMATS[format].read(bytes).strip!();
}

/** A band decode of `bytes` (its format sniffed), whole and full size unless `options` say otherwise. */
export function openDecode(bytes: Uint8Array, options: DecodeOptions = { shrink: 1, region: null }): Promise<RowSource> {
  return readImage(bytes).decode(options);
}

/** An AVIF file's container as the header parsed it, after the container checks (what the decoder uses). */
export function verifiedAvif(bytes: Uint8Array): AvifContainer {
  const file = FORMATS.avif.read(bytes);
  file.verify();
  return (file.header as AvifHeader).container;
}

/** The ICC profile a `format` file embeds (PNG's inflated), whatever else describes its colour; null without one or for a container that cannot be read. */
export async function readIccProfile(format: ImageFormat, bytes: Uint8Array): Promise<Uint8Array | null> {
  const icc = headerOrNull(format, bytes)?.colour.find((description) => description.kind !== 'cicp');
  if (!icc) return null;
  return icc.kind === 'icc' ? icc.bytes : inflateProfile(icc.bytes);
}

/** The colour description that rules a `format` file, as the colour stage takes it; null for none or a container that cannot be read. */
export async function colourProfileOf(format: ImageFormat, bytes: Uint8Array): Promise<ColourProfile | null> {
  const header = headerOrNull(format, bytes);
  return header && readColourProfile(header.colour);
}

function headerOrNull(format: ImageFormat, bytes: Uint8Array): ImageHeader | null {
  try {
    return FORMATS[format].read(bytes).header;
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}
