import { AppError } from '../errors';
import { FORMATS } from './formats/index';
import { formatLimit } from './limits';
import { largestFitting, MB, peakBytes, phasePeaks, pixelsOf } from './memory-plan';
import { fitToBudget, memoryPlan, withInputPixels, withOutputPixels, type ProcessingPlan } from './plan';
import type { Dimensions } from './types';

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
