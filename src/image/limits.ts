import { AppError } from '../errors';
import { FORMATS } from './formats/index';
import { largestFitting, MB, peakBytes, phasePeaks, pixelsOf } from './memory-plan';
import { fitToBudget, memoryPlan, withInputPixels, withOutputPixels, type ProcessingPlan } from './plan';
import type { Dimensions } from './types';

/**
 * Rejects an image whose pixel count is over `maxPixels` (a per-plan setting, in pixels) with
 * FILE_TOO_LARGE, e.g. "The image is 20000x20000 (400.0 megapixels); the limit for input images
 * is 14 megapixels."
 */
export function assertWithinPixelLimit(dims: Dimensions, maxPixels: number, what: 'input' | 'output'): void {
  const pixels = dims.width * dims.height;
  if (pixels <= maxPixels) return;
  const limit = formatLimit(maxPixels / 1e6);
  throw new AppError(
    'FILE_TOO_LARGE',
    `The image is ${dims.width}x${dims.height} (${formatSize(pixels / 1e6, maxPixels / 1e6)} megapixels); ` +
      `the limit for ${what} images is ${limit} megapixels.`,
    { width: dims.width, height: dims.height, maxPixels, what },
  );
}

/** The limit as written in settings: "40", "12.5". */
function formatLimit(megapixels: number): string {
  return String(Number(megapixels.toFixed(3)));
}

/** One decimal, or as many as it takes (up to 6) for the size to read as larger than the limit. */
function formatSize(megapixels: number, limit: number): string {
  for (let digits = 1; digits < 6; digits++) {
    const text = megapixels.toFixed(digits);
    if (Number(text) > limit) return text;
  }
  return megapixels.toFixed(6);
}

/**
 * Refuses, before decoding, a request whose pipeline would hold more than `budgetBytes` at its
 * fullest (memory-plan.ts), with FILE_TOO_LARGE naming the largest size that would fit: on a
 * deployed Worker such a request would otherwise end the isolate, and every request in it. When
 * a result of at least MIN_NAMED_RESULT_PIXELS would fit, the message names the largest result;
 * otherwise the largest input.
 */
export function assertFitsMemory(plan: ProcessingPlan, budgetBytes: number): void {
  const peak = peakBytes(memoryPlan(plan));
  if (peak <= budgetBytes) return;
  const needed = `needs about ${Math.ceil(peak / MB)} MB of memory, more than a Worker has for one image (${Math.floor(budgetBytes / MB)} MB)`;
  const detail = { phases: phasePeaks(memoryPlan(plan)), budgetBytes };
  // Another size is planned as the run would plan it: the decoder's and encoders' modes chosen
  // again (a progressive file's packed coefficients, a window of rows) and its bound capped to what
  // the budget leaves.
  const refitted = (resized: ProcessingPlan) => {
    const unfitted = { ...resized, decode: { ...resized.decode, lowMemory: undefined, rowWindow: undefined }, lowMemory: false, packedEncodeBytes: undefined, maxResultBytes: undefined, orientStripRows: undefined };
    return fitToBudget(unfitted, budgetBytes);
  };
  const fitsWithOutput = (pixels: number) => peakBytes(memoryPlan(refitted(withOutputPixels(plan, pixels)))) <= budgetBytes;
  if (fitsWithOutput(MIN_NAMED_RESULT_PIXELS)) {
    const { label } = FORMATS[plan.outputFormat];
    throw new AppError(
      'FILE_TOO_LARGE',
      `A ${plan.output.width}x${plan.output.height} ${label} result (${megapixels(plan.output)} megapixels) ${needed}; ` +
        `${label} results can be at most ${largestNamed(fitsWithOutput, pixelsOf(plan.output))} megapixels from this image. Ask for a smaller size (resize takes a format too) or another format.`,
      detail,
    );
  }
  const { label } = plan.file.format;
  const fitsWithInput = (pixels: number) => peakBytes(memoryPlan(refitted(withInputPixels(plan, pixels)))) <= budgetBytes;
  throw new AppError(
    'FILE_TOO_LARGE',
    `Processing this ${plan.stored.width}x${plan.stored.height} ${label} image (${megapixels(plan.stored)} megapixels) this way ${needed}; ` +
      `${label} images like it can be at most ${largestNamed(fitsWithInput, pixelsOf(plan.stored))} megapixels for it.`,
    detail,
  );
}

/**
 * The largest size below `upper` that `fits`, in tenths of a megapixel as a message names it.
 * Sizes that fit need not be one range (shrink-on-load steps, an allowance at its floor that a few
 * more macroblocks tip over): the size named is checked, and made smaller until it fits.
 */
function largestNamed(fits: (pixels: number) => boolean, upper: number): string {
  let tenths = Math.floor(largestFitting(fits, upper) / 1e5);
  while (tenths > 1 && !fits(tenths * 1e5)) tenths--;
  return formatLimit(tenths / 10);
}

/**
 * The least result worth naming: where only smaller ones fit beside the decode (a 48 MP AVIF with
 * its alpha decoded whole, to AVIF), "at most 0 megapixels" helps nobody, so the input is named.
 */
const MIN_NAMED_RESULT_PIXELS = 100_000;

function megapixels({ width, height }: Dimensions): string {
  return ((width * height) / 1e6).toFixed(1);
}
