import { AppError, invalidParameter } from '../errors';
import { crop } from './crop';
import { readOrientation } from './exif';
import { FORMATS } from './formats';
import { assertWithinPixelLimit } from './limits';
import type { Operation, PixelLimits, ProcessedImage, Region } from './operations';
import { applyOrientation } from './orient';
import { resize, targetSize } from './resize';
import { detectFormat } from './sniff';
import type { Dimensions, ImageFormat, RgbaImage } from './types';

/**
 * The whole processing pipeline, in the order every request goes through it:
 * sniff -> header size and pixel-limit guard -> container checksums -> (lossless strip |
 * decode -> orient -> crop/resize -> encode). Nothing is decoded before the guard has passed.
 */
export async function processImage(input: Uint8Array, operation: Operation, limits: PixelLimits): Promise<ProcessedImage> {
  const inputFormat = detectFormat(input);
  if (!inputFormat) {
    throw new AppError('UNSUPPORTED_FORMAT', 'The file is not a supported image: send a JPEG, PNG, WebP or AVIF file.');
  }
  const format = FORMATS[inputFormat];
  const stored = format.readDimensions(input);
  assertWithinPixelLimit(stored, limits.maxInputPixels, 'input');
  format.verifyContainer?.(input);
  const orientation = readOrientation(inputFormat, input);
  const outputFormat = operation.format ?? inputFormat;

  if (operation.kind === 'remove-metadata' && outputFormat === inputFormat && format.stripMetadata) {
    return { bytes: format.stripMetadata(input), format: inputFormat, ...displayedSize(stored, orientation) };
  }

  const decoded = await decode(inputFormat, input);
  // A header that understates the coded size must not smuggle a bigger image past the guard.
  assertWithinPixelLimit(decoded, limits.maxInputPixels, 'input');
  let image = applyOrientation(decoded, orientation);
  if (operation.kind === 'crop') image = crop(image, checkedRegion(operation.region, image));
  if (operation.kind === 'resize') {
    const size = targetSize(image, operation);
    assertWithinPixelLimit(size, limits.maxOutputPixels, 'output');
    image = resize(image, size.width, size.height);
  }
  return { bytes: await encode(outputFormat, image, operation.quality), format: outputFormat, width: image.width, height: image.height };
}

function displayedSize(stored: Dimensions, orientation: number): Dimensions {
  return orientation >= 5 ? { width: stored.height, height: stored.width } : stored;
}

async function decode(format: ImageFormat, input: Uint8Array): Promise<RgbaImage> {
  try {
    return await FORMATS[format].codec.decode(input);
  } catch (error) {
    throw new AppError(
      'UNSUPPORTED_FORMAT',
      `The file looks like ${FORMATS[format].label} but could not be decoded: it is damaged, truncated or uses a feature that is not supported.`,
      error,
    );
  }
}

async function encode(format: ImageFormat, image: RgbaImage, quality: number): Promise<Uint8Array> {
  try {
    return await FORMATS[format].codec.encode(image, quality);
  } catch (error) {
    throw new AppError('CONVERSION_FAILED', `Encoding the result as ${FORMATS[format].label} failed.`, error);
  }
}

/** decisions.md: a region partly or wholly outside the image, or empty, is refused with the image size. */
function checkedRegion(region: Region, image: Dimensions): Region {
  const { x, y, width, height } = region;
  const field =
    width === 0 ? 'width'
    : height === 0 ? 'height'
    : x >= image.width ? 'x'
    : y >= image.height ? 'y'
    : x + width > image.width ? 'width'
    : y + height > image.height ? 'height'
    : null;
  if (field === null) return region;
  const problem = width === 0 || height === 0 ? 'the crop region is empty' : 'the crop region lies outside the image';
  throw invalidParameter(
    field,
    `${problem}; the image is ${image.width}x${image.height} pixels (as displayed, after EXIF orientation), so x + width must be at most ${image.width} and y + height at most ${image.height}`,
  );
}
