import { AppError, invalidParameter } from '../errors';
import { readColourProfile } from './color';
import { crop } from './crop';
import { bandedDecode, decodeImage, type Decoded } from './decode';
import { encodeImage, encodesInBands } from './encode';
import { readOrientation } from './exif';
import { flattenOnWhite } from './flatten';
import { FORMATS } from './formats';
import { planJpegBands } from './jpeg-entropy/bands';
import { assertFitsMemory, assertWithinPixelLimit } from './limits';
import { MemoryMeter } from './memory-meter';
import { JPEG_BAND_PIXELS, peakBytes, type MemoryPlan } from './memory-plan';
import type { Operation, PixelLimits, ProcessedImage, Region } from './operations';
import { applyOrientation } from './orient';
import { resize, targetSize } from './resize';
import { detectFormat } from './sniff';
import type { Dimensions, ImageFormat, RgbaImage } from './types';

/** image-api.md: resize sides are 1 to 12000 pixels, also when one side follows the other. */
export const MAX_RESIZE_SIDE = 12_000;

/**
 * The whole processing pipeline, in the order every request goes through it:
 *   sniff -> header size and pixel-limit guard -> container checks -> (lossless strip |
 *   plan the output size -> memory guard -> decode to sRGB (baseline JPEG: in bands, straight
 *   into the oriented, cropped frame) -> orient -> crop/resize -> flatten -> encode).
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
    const held = input.byteLength + bytes.byteLength;
    return { bytes, format: inputFormat, ...displayed, peakBytes: held, plannedPeakBytes: held };
  }

  const outputSize = plannedSize(operation, displayed, limits);
  assertEncodable(outputFormat, outputSize);
  const region = operation.kind === 'crop' ? operation.region : { x: 0, y: 0, ...displayed };
  const profile = await readColourProfile(inputFormat, input);
  const jpegBands = inputFormat === 'jpeg' && stored.width * stored.height > JPEG_BAND_PIXELS ? planJpegBands(input, JPEG_BAND_PIXELS) : null;
  const banded = bandedDecode(jpegBands && jpegBands.bands, profile);
  const inBands = banded !== null;
  const plan = memoryPlan({ inputFormat, input, stored, orientation, region, inBands, operation, outputFormat, outputSize });
  assertFitsMemory(plan, limits.memoryBudgetBytes);

  const meter = new MemoryMeter();
  // No variable keeps the decoded frame: once transformed, it can be collected before encoding.
  const image = transform(
    await decodeImage({ format: inputFormat, input, stored, orientation, region, banded, profile, meter }),
    { orientation, operation, outputSize, outputFormat },
    (before, after) => meter.note(input, before, after),
  );
  const bytes = await encodeImage(outputFormat, image, operation.quality);
  meter.note(input, image.data, bytes);
  return { bytes, format: outputFormat, width: image.width, height: image.height, peakBytes: meter.peakBytes, plannedPeakBytes: peakBytes(plan) };
}

interface TransformRequest {
  orientation: number;
  operation: Operation;
  outputSize: Dimensions;
  outputFormat: ImageFormat;
}

/**
 * The pixel steps after decoding. Each may return its input unchanged; a replaced frame is no
 * longer referenced once the next step has run, so the collector can take it before encoding.
 */
function transform(decoded: Decoded, request: TransformRequest, note: (before: RgbaImage['data'], after: RgbaImage['data']) => void): RgbaImage {
  const { orientation, operation, outputSize, outputFormat } = request;
  const steps: ((image: RgbaImage) => RgbaImage)[] = [
    (image) => (decoded.placed ? image : applyOrientation(image, orientation)),
    (image) => (operation.kind === 'crop' && !decoded.placed ? crop(image, operation.region) : image),
    (image) => (operation.kind === 'resize' ? resize(image, outputSize.width, outputSize.height) : image),
    (image) => (FORMATS[outputFormat].supportsAlpha ? image : flattenOnWhite(image)),
  ];
  let image = decoded.image;
  for (const step of steps) {
    const next = step(image);
    note(image.data, next.data);
    image = next;
  }
  return image;
}

interface PlanFacts {
  inputFormat: ImageFormat;
  input: Uint8Array;
  stored: Dimensions;
  orientation: number;
  region: Region;
  inBands: boolean;
  operation: Operation;
  outputFormat: ImageFormat;
  outputSize: Dimensions;
}

/** What the steps above will allocate, for the memory guard. */
function memoryPlan(facts: PlanFacts): MemoryPlan {
  const { inputFormat, input, stored, orientation, region, inBands, operation, outputFormat, outputSize } = facts;
  const cropped = operation.kind === 'crop';
  return {
    inputFormat,
    inputBytes: input.byteLength,
    input: stored,
    decodeInBands: inBands,
    decodedPixels: inBands ? region.width * region.height : stored.width * stored.height,
    orientationCopy: !inBands && orientation !== 1,
    cropCopy: !inBands && cropped,
    resize: operation.kind === 'resize' ? { from: region, to: outputSize } : null,
    outputFormat,
    output: outputSize,
    encodeInBands: encodesInBands(outputFormat, outputSize.width * outputSize.height),
    quality: operation.quality,
  };
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
