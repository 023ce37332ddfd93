import { AppError, invalidParameter } from '../errors';
import { readColourProfile, toSrgbRows } from './stages/colour';
import { readOrientation } from './exif';
import { flattenRows } from './stages/flatten';
import { FORMATS } from './formats/index';
import { assertFitsMemory, assertWithinPixelLimit } from './limits';
import { MemoryMeter } from './memory-meter';
import { peakBytes } from './memory-plan';
import type { Operation, PixelLimits, ProcessedImage, Region, RunOptions } from './operations';
import { orientRows, storedRegion } from './stages/orient';
import { chooseLowMemory, encodeFacts, fitResultToBudget, memoryPlan, shrinkOnLoad, shrunkSize, type ProcessingPlan } from './plan';
import { resizeRows, targetSize } from './stages/resize';
import { forward, type RowSource } from './stages/rows';
import { yieldPoint } from './run-context';
import { detectFormat } from './sniff';
import type { Dimensions, ImageFormat } from './types';

/** image-api.md: resize sides are 1 to 12000 pixels, also when one side follows the other. */
export const MAX_RESIZE_SIDE = 12_000;

/**
 * The whole processing pipeline, in the order every request goes through it:
 *   sniff -> header size and pixel-limit guard -> container checks -> (lossless strip |
 *   plan every step from the header -> memory guard -> stream rows: decode (shrink-on-load, or
 *   only the rows and columns a crop needs) -> colour to sRGB -> flatten -> resize ->
 *   orientation -> encode).
 * Everything that can be refused from the header is refused before any decode.
 */
export async function processImage(input: Uint8Array, operation: Operation, limits: PixelLimits, options: RunOptions = {}): Promise<ProcessedImage> {
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
    const bytes = format.stripMetadata(input);
    const held = input.byteLength + bytes.byteLength;
    return { bytes, format: inputFormat, ...displayedSize(stored, orientation), peakBytes: held, plannedPeakBytes: held };
  }

  const plan = planProcessing({ inputFormat, input, stored, orientation, outputFormat, operation, limits });
  assertFitsMemory(plan, limits.memoryBudgetBytes);
  const plannedPeakBytes = peakBytes(memoryPlan(plan));
  const release = options.admit ? await options.admit(plannedPeakBytes) : () => {};
  try {
    const profile = await readColourProfile(inputFormat, input);
    const meter = new MemoryMeter(input.byteLength);
    const bytes = await meter.run(async () => {
      const source = await decodeAndTransform(plan, profile, meter);
      return encode(plan, meter.metered(yielding(source)));
    }, options.contended);
    meter.sample(bytes.byteLength);
    return { bytes, format: outputFormat, ...plan.output, peakBytes: meter.peakBytes, plannedPeakBytes };
  } finally {
    release();
  }
}

/** Lets other runs in the isolate go on between bands when they are waiting (run-context.ts). */
function yielding(source: RowSource): RowSource {
  return {
    ...forward(source),
    async read() {
      const band = await source.read();
      if (band) await yieldPoint(band.rows * source.width);
      return band;
    },
  };
}

/** The steps between decoder and encoder, each a stage that passes bands of rows on. */
async function decodeAndTransform(plan: ProcessingPlan, profile: Parameters<typeof toSrgbRows>[1], meter: MemoryMeter): Promise<RowSource> {
  let source = await decode(plan);
  meter.sample(source.heldBytes());
  source = toSrgbRows(source, profile);
  if (plan.flatten) source = flattenRows(source);
  if (plan.resize) source = resizeRows(source, plan.resize.width, plan.resize.height);
  if (!plan.orientInEncoder) source = orientRows(source, plan.orientation);
  return source;
}

async function decode(plan: ProcessingPlan): Promise<RowSource> {
  const source = await guardedDecode(plan.inputFormat, () => FORMATS[plan.inputFormat].decoder.open(plan.input, plan.decode));
  const { width, height } = plan.decoded;
  if (source.width !== width || source.height !== height) {
    source.close();
    throw damaged(plan.inputFormat, `the decoder gives ${source.width}x${source.height}, the header promised ${width}x${height}`);
  }
  return source;
}

/** What the encoder makes of the rows; decoding errors that surface while rows are read stay decoding errors. */
async function encode(plan: ProcessingPlan, source: RowSource): Promise<Uint8Array> {
  const { encoder, label, resultBound } = FORMATS[plan.outputFormat];
  const options = {
    quality: plan.quality,
    orientation: plan.orientInEncoder ? plan.orientation : 1,
    maxBytes: resultBound(encodeFacts(plan)),
    lowMemory: plan.lowMemory,
  };
  try {
    return await encoder.encode(source, options);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('CONVERSION_FAILED', `Encoding the result as ${label} failed.`, error);
  } finally {
    source.close();
  }
}

interface PlanInput {
  inputFormat: ImageFormat;
  input: Uint8Array;
  stored: Dimensions;
  orientation: number;
  outputFormat: ImageFormat;
  operation: Operation;
  limits: PixelLimits;
}

/** Every step decided from the header: the output size (checked against the request's rules), decode options, resize target. */
function planProcessing(facts: PlanInput): ProcessingPlan {
  const { inputFormat, input, stored, orientation, outputFormat, operation, limits } = facts;
  const displayed = displayedSize(stored, orientation);
  const output = plannedSize(operation, displayed, limits);
  assertEncodable(outputFormat, output);
  const transposed = orientation >= 5;
  const format = FORMATS[inputFormat];
  const region: Region | null = operation.kind === 'crop' ? storedRegion(operation.region, orientation, stored) : null;
  let shrink = 1;
  let resize: Dimensions | null = null;
  if (operation.kind === 'resize') {
    const target = transposed ? { width: output.height, height: output.width } : output;
    shrink = shrinkOnLoad(format.decoder.shrinkFactors, stored, target);
    const decoded = shrunkSize(stored, shrink);
    if (decoded.width !== target.width || decoded.height !== target.height) resize = target;
  }
  const decoded = region ? { width: region.width, height: region.height } : shrunkSize(stored, shrink);
  const alpha = format.mayHaveAlpha(input);
  const plan: ProcessingPlan = {
    inputFormat,
    input,
    inputBytes: input.byteLength,
    stored,
    orientation,
    decode: { shrink, region },
    decoded,
    alpha,
    grey: false,
    flatten: alpha && !FORMATS[outputFormat].supportsAlpha,
    resize,
    orientInEncoder: FORMATS[outputFormat].encoder.placesOrientation,
    outputFormat,
    output,
    quality: operation.quality,
    lowMemory: false,
  };
  return fitResultToBudget({ ...plan, lowMemory: chooseLowMemory(plan, limits.memoryBudgetBytes) }, limits.memoryBudgetBytes);
}

function displayedSize(stored: Dimensions, orientation: number): Dimensions {
  return orientation >= 5 ? { width: stored.height, height: stored.width } : stored;
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
function checkedRegion(region: Region, image: Dimensions): Dimensions {
  const { x, y, width, height } = region;
  const field =
    width === 0 ? 'width'
    : height === 0 ? 'height'
    : x >= image.width ? 'x'
    : y >= image.height ? 'y'
    : x + width > image.width ? 'width'
    : y + height > image.height ? 'height'
    : null;
  if (field === null) return { width, height };
  const problem = width === 0 || height === 0 ? 'the crop region is empty' : 'the crop region lies outside the image';
  throw invalidParameter(
    field,
    `${problem}; the image is ${image.width}x${image.height} pixels (as displayed, after EXIF orientation), so x + width must be at most ${image.width} and y + height at most ${image.height}`,
  );
}

async function guardedDecode<T>(format: ImageFormat, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (error) {
    throw asDecodeError(format, error);
  }
}

/** Running out of memory says nothing about the file; everything else a decoder throws is the file's fault. */
export function asDecodeError(format: ImageFormat, error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof RangeError || /memory|Cannot enlarge/i.test(String(error))) {
    return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', error);
  }
  return damaged(format, error);
}

export function damaged(format: ImageFormat, detail: unknown): AppError {
  return new AppError(
    'UNSUPPORTED_FORMAT',
    `The file looks like ${FORMATS[format].label} but could not be decoded: it is damaged, truncated or uses a feature that is not supported.`,
    detail,
  );
}
