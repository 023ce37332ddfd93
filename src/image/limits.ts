import { AppError } from '../errors';
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
export function formatLimit(megapixels: number): string {
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
