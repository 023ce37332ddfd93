import { blurKernelBytes, BlurKernels } from './filter-kernels';
import type { RowSource } from './rows';
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
  let band: { data: Uint8Array; row: number; rows: number } | null = null;
  const held = blurBytes({ width, height }, sigma, alpha);
  let y = 0;
  const pushRow = async () => {
    if (!band || band.row >= band.rows) {
      const next = await source.read();
      if (!next) throw new Error(`blur: the source ended before its ${height} rows`);
      band = { data: next.data, row: 0, rows: next.rows };
    }
    kernels.push(band.data.subarray(band.row * width * 4, ++band.row * width * 4));
  };
  return {
    width,
    height,
    model: source.model,
    alpha,
    grey: source.grey,
    async read() {
      if (y >= height) {
        source.close();
        return null;
      }
      const rows = Math.min(BAND_ROWS, height - y);
      for (let row = 0; row < rows; row++) {
        while (kernels.wantsInput()) await pushRow();
        kernels.emit(row);
      }
      const result = { y, rows, data: kernels.band(rows) };
      y += rows;
      return result;
    },
    heldBytes: () => source.heldBytes() + held,
    close: () => source.close(),
  };
}
