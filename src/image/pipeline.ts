import { AppError, invalidParameter } from '../errors';
import { crop } from './crop';
import { readColourProfile, toSrgb } from './color';
import { readOrientation } from './exif';
import { flattenOnWhite } from './flatten';
import { FORMATS } from './formats';
import { assertWithinPixelLimit } from './limits';
import type { Operation, PixelLimits, ProcessedImage, Region } from './operations';
import { applyOrientation } from './orient';
import { resize, targetSize } from './resize';
import { MemoryMeter } from './memory-meter';
import { detectFormat } from './sniff';
import type { DecodedImage, Dimensions, ImageFormat, RgbaImage } from './types';

/** image-api.md: resize sides are 1 to 12000 pixels, also when one side follows the other. */
export const MAX_RESIZE_SIDE = 12_000;

/**
 * The whole processing pipeline, in the order every request goes through it:
 *   sniff -> header size and pixel-limit guard -> container checks -> (lossless strip |
 *   plan the output size -> decode -> to sRGB -> orient -> crop/resize -> flatten -> encode).
 * Everything that can be refused from the header is refused before any decode.
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
  const displayed = orientation >= 5 ? { width: stored.height, height: stored.width } : stored;
  const outputFormat = operation.format ?? inputFormat;

  if (operation.kind === 'remove-metadata' && outputFormat === inputFormat && format.stripMetadata) {
    const bytes = format.stripMetadata(input);
    return { bytes, format: inputFormat, ...displayed, peakBytes: input.byteLength + bytes.byteLength };
  }

  const outputSize = plannedSize(operation, displayed, limits);
  assertEncodable(outputFormat, outputSize);

  const meter = new MemoryMeter();
  const decoded = await decode(inputFormat, input);
  meter.note(input, decoded.data);
  if (decoded.width !== stored.width || decoded.height !== stored.height) {
    throw damaged(inputFormat, `header says ${stored.width}x${stored.height}, image data is ${decoded.width}x${decoded.height}`);
  }
  // Outputs carry no ICC profile (decisions.md), so pixels are converted to sRGB, the space a
  // viewer assumes without one; CMYK always needs converting.
  const srgb = toSrgb(decoded, await readColourProfile(inputFormat, input));
  meter.note(input, decoded.data, srgb.data);
  // Each step may return its input unchanged; the meter counts a shared buffer once.
  const steps: ((image: RgbaImage) => RgbaImage)[] = [
    (image) => applyOrientation(image, orientation),
    (image) => (operation.kind === 'crop' ? crop(image, operation.region) : image),
    (image) => (operation.kind === 'resize' ? resize(image, outputSize.width, outputSize.height) : image),
    (image) => (FORMATS[outputFormat].supportsAlpha ? image : flattenOnWhite(image)),
  ];
  let image = srgb;
  for (const step of steps) {
    const next = step(image);
    meter.note(input, image.data, next.data);
    image = next;
  }
  const bytes = await encode(outputFormat, image, operation.quality);
  meter.note(input, image.data, bytes);
  return { bytes, format: outputFormat, width: image.width, height: image.height, peakBytes: meter.peakBytes };
}

/** The output size, checked against the request's rules and the output pixel limit. */
function plannedSize(operation: Operation, displayed: Dimensions, limits: PixelLimits): Dimensions {
  if (operation.kind === 'crop') return checkedRegion(operation.region, displayed);
  if (operation.kind !== 'resize') return displayed;
  const size = targetSize(displayed, operation);
  if (size.width > MAX_RESIZE_SIDE || size.height > MAX_RESIZE_SIDE) {
    throw invalidParameter(
      operation.width !== undefined ? 'width' : 'height',
      `the resized image would be ${size.width}x${size.height} pixels (the image is ${displayed.width}x${displayed.height}); each side may be at most ${MAX_RESIZE_SIDE}`,
    );
  }
  assertWithinPixelLimit(size, limits.maxOutputPixels, 'output');
  return size;
}

function assertEncodable(format: ImageFormat, size: Dimensions): void {
  const { maxDimension, label } = FORMATS[format];
  if (size.width > maxDimension || size.height > maxDimension) {
    throw invalidParameter(
      'format',
      `${label} images can be at most ${maxDimension} pixels per side and the result would be ${size.width}x${size.height}; choose another format or a smaller size`,
    );
  }
}

function damaged(format: ImageFormat, detail: unknown): AppError {
  return new AppError(
    'UNSUPPORTED_FORMAT',
    `The file looks like ${FORMATS[format].label} but could not be decoded: it is damaged, truncated or uses a feature that is not supported.`,
    detail,
  );
}

async function decode(format: ImageFormat, input: Uint8Array): Promise<DecodedImage> {
  try {
    return await FORMATS[format].codec.decode(input);
  } catch (error) {
    // Running out of memory says nothing about the file; everything else is the file's fault.
    if (error instanceof RangeError || /memory|Cannot enlarge/i.test(String(error))) {
      throw new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', error);
    }
    throw damaged(format, error);
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
