import { AppError } from '../errors';
import { encodeJpegInBands } from './codecs/jpeg';
import { FORMATS } from './formats';
import { JPEG_BAND_PIXELS } from './memory-plan';
import type { ImageFormat, RgbaImage } from './types';

/** mozjpeg holds ~17 bytes a pixel for a whole-image encode, so larger JPEGs are encoded in bands and stitched. */
export function encodesInBands(format: ImageFormat, pixels: number): boolean {
  return format === 'jpeg' && pixels > JPEG_BAND_PIXELS;
}

export async function encodeImage(format: ImageFormat, image: RgbaImage, quality: number): Promise<Uint8Array> {
  try {
    if (encodesInBands(format, image.width * image.height)) return await encodeJpegInBands(image, quality);
    return await FORMATS[format].codec.encode(image, quality);
  } catch (error) {
    throw new AppError('CONVERSION_FAILED', `Encoding the result as ${FORMATS[format].label} failed.`, error);
  }
}
