import { AppError } from '../errors';
import { BandFrame } from './band-frame';
import { decodeJpegBands } from './codecs/jpeg';
import { rgbToSrgbConversion, toSrgb, type ColourProfile, type RgbToSrgb } from './color';
import type { Orientation } from './exif';
import { FORMATS } from './formats';
import type { JpegBand } from './jpeg-entropy/bands';
import type { MemoryMeter } from './memory-meter';
import type { Region } from './operations';
import type { Dimensions, ImageFormat, RgbaImage } from './types';

/**
 * The decode step: a frame of sRGB pixels. A whole decode gives the stored image (orientation
 * and crop still to do); a banded decode (baseline JPEG) gives the final frame directly.
 */
export interface Decoded {
  image: RgbaImage;
  /** Orientation and the crop region are already applied. */
  placed: boolean;
}

export interface DecodeRequest {
  format: ImageFormat;
  input: Uint8Array;
  stored: Dimensions;
  orientation: Orientation | number;
  /** The displayed region the result needs (the whole image unless cropping). */
  region: Region;
  /** Set when the file is decoded band by band (bandedDecode). */
  banded: BandedDecode | null;
  profile: ColourProfile | null;
  meter: MemoryMeter;
}

/** A baseline JPEG's bands (jpeg-entropy/bands.ts) and the colour conversion, built once for all of them. */
export interface BandedDecode {
  bands: JpegBand[];
  conversion: RgbToSrgb;
}

/** Bands are used unless the colour conversion depends on the whole image (a grey profile). */
export function bandedDecode(bands: JpegBand[] | null, profile: ColourProfile | null): BandedDecode | null {
  if (!bands) return null;
  const conversion = rgbToSrgbConversion(profile);
  return conversion.kind === 'if-grey' ? null : { bands, conversion };
}

export async function decodeImage(request: DecodeRequest): Promise<Decoded> {
  const { format, input, stored, banded, profile, meter } = request;
  if (banded) {
    const { bands, conversion } = banded;
    const frame = new BandFrame(stored, request.orientation, request.region);
    await guarded(format, () =>
      decodeJpegBands(bands, frame.neededRows(), (rgba, y, rows) => {
        if (conversion.kind === 'convert') conversion.convert(rgba);
        frame.place(rgba, y, rows);
        meter.note(input, frame.image.data, rgba);
      }),
    );
    return { image: frame.image, placed: true };
  }
  const decoded = await guarded(format, () => FORMATS[format].codec.decode(input));
  meter.note(input, decoded.data);
  if (decoded.width !== stored.width || decoded.height !== stored.height) {
    throw damaged(format, `header says ${stored.width}x${stored.height}, image data is ${decoded.width}x${decoded.height}`);
  }
  // Outputs carry no ICC profile (decisions.md), so pixels are converted to sRGB, the space a
  // viewer assumes without one; CMYK always needs converting.
  return { image: toSrgb(decoded, profile), placed: false };
}

async function guarded<T>(format: ImageFormat, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (error) {
    if (error instanceof AppError) throw error;
    // Running out of memory says nothing about the file; everything else is the file's fault.
    if (error instanceof RangeError || /memory|Cannot enlarge/i.test(String(error))) {
      throw new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', error);
    }
    throw damaged(format, error);
  }
}

export function damaged(format: ImageFormat, detail: unknown): AppError {
  return new AppError(
    'UNSUPPORTED_FORMAT',
    `The file looks like ${FORMATS[format].label} but could not be decoded: it is damaged, truncated or uses a feature that is not supported.`,
    detail,
  );
}
