import { blurKernelBytes, BlurKernels } from './filter-kernels';
import type { RowSource } from './rows';
import { windowedRows } from './windowed';
import type { Dimensions } from '../types';

/* sharp's blur(sigma): vips_gaussblur with its minimum amplitude 0.2 and integer precision (gaussian.ts). */

const BAND_ROWS = 16;

/**
 * The planes a blur filters: one for grey without alpha, three for colour, and with alpha the
 * colour premultiplied by it and the alpha itself (sharp premultiplies before blurring, so
 * transparent pixels' colours do not bleed into their neighbours).
 */
const channelsOf = (traits: { alpha: boolean; grey: boolean }) => (traits.alpha ? 4 : traits.grey ? 1 : 3);

/**
 * Bytes the blur stage holds for a picture of `size` (memory-plan.ts): the kernels' memory, with the
 * Gaussian's window and grid and the output band. A colour picture is counted, which holds more
 * than a grey one.
 */
export function blurBytes(size: Dimensions, sigma: number, alpha: boolean): number {
  return blurKernelBytes(size.width, size.height, channelsOf({ alpha, grey: false }), sigma, BAND_ROWS);
}

/** The blur stage: `source` through a Gaussian of `sigma` as sharp's blur(sigma), in bands, holding a window of rows. */
export function blurRows(source: RowSource, sigma: number): RowSource {
  const { width, height, alpha } = source;
  const kernels = new BlurKernels(width, height, channelsOf(source), sigma, BAND_ROWS);
  return windowedRows(source, 'blur', kernels, BAND_ROWS, blurBytes({ width, height }, sigma, alpha));
}
