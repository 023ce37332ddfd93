import { AppError } from '../errors';
import { FORMATS } from './formats';
import { largestFitting, stagePeaks, type MemoryPlan } from './memory-plan';
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
 * deployed Worker such a request would otherwise end the isolate, and every request in it.
 */
export function assertFitsMemory(plan: MemoryPlan, budgetBytes: number): void {
  const stages = stagePeaks(plan);
  const peak = Math.max(stages.decode, stages.transform, stages.encode);
  if (peak <= budgetBytes) return;
  const needed = `needs about ${Math.ceil(peak / MB)} MB of memory, more than a Worker has for one image (${Math.floor(budgetBytes / MB)} MB)`;
  const detail = { stages, budgetBytes };
  if (stages.encode === peak) {
    const { label } = FORMATS[plan.outputFormat];
    const largest = largestFitting((pixels) => stagePeaks(withOutputPixels(plan, pixels)).encode <= budgetBytes);
    throw new AppError(
      'FILE_TOO_LARGE',
      `A ${plan.output.width}x${plan.output.height} ${label} result (${megapixels(plan.output)} megapixels) ${needed}; ` +
        `${label} results can be at most ${formatLimit(Math.floor(largest / 1e5) / 10)} megapixels. Ask for a smaller size (resize takes a format too) or another format.`,
      detail,
    );
  }
  const { label } = FORMATS[plan.inputFormat];
  const largest = largestFitting((pixels) => {
    const scaled = stagePeaks(withInputPixels(plan, pixels));
    return Math.max(scaled.decode, scaled.transform) <= budgetBytes;
  });
  throw new AppError(
    'FILE_TOO_LARGE',
    `Processing this ${plan.input.width}x${plan.input.height} ${label} image (${megapixels(plan.input)} megapixels) this way ${needed}; ` +
      `${label} images can be at most ${formatLimit(Math.floor(largest / 1e5) / 10)} megapixels for it.`,
    detail,
  );
}

const MB = 1 << 20;

function megapixels({ width, height }: Dimensions): string {
  return ((width * height) / 1e6).toFixed(1);
}

function scale({ width, height }: Dimensions, factor: number): Dimensions {
  return { width: Math.max(1, Math.round(width * factor)), height: Math.max(1, Math.round(height * factor)) };
}

/** The same request with a result of about `pixels` pixels. */
export function withOutputPixels(plan: MemoryPlan, pixels: number): MemoryPlan {
  const factor = Math.sqrt(pixels / (plan.output.width * plan.output.height));
  const output = scale(plan.output, factor);
  return { ...plan, output, resize: plan.resize && { from: plan.resize.from, to: output } };
}

/** The same request on an input of about `pixels` pixels (file size, regions and results scaled alike). */
export function withInputPixels(plan: MemoryPlan, pixels: number): MemoryPlan {
  const factor = Math.sqrt(pixels / (plan.input.width * plan.input.height));
  const scaled = {
    ...plan,
    input: scale(plan.input, factor),
    inputBytes: Math.round(plan.inputBytes * factor * factor),
    decodedPixels: Math.round(plan.decodedPixels * factor * factor),
  };
  // A resize asks for its size; other results follow the input.
  if (plan.resize) return { ...scaled, resize: { from: scale(plan.resize.from, factor), to: plan.resize.to } };
  return { ...scaled, output: scale(plan.output, factor) };
}
