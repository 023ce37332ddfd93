import { gaussianBytes, gaussianMask, GaussianRows, gridStep } from './gaussian';
import { pixelWords } from './pixels';
import type { RowSource } from './rows';
import type { Dimensions } from '../types';

/** sharp's blur(sigma): vips_gaussblur with its minimum amplitude 0.2 and integer precision. */
const MIN_AMPLITUDE = 0.2;
const BAND_ROWS = 16;

/**
 * The planes a blur filters: one for grey without alpha, three for colour, and with alpha the
 * colour premultiplied by it and the alpha itself (sharp premultiplies before blurring, so
 * transparent pixels' colours do not bleed into their neighbours).
 */
const channelsOf = (traits: { alpha: boolean; grey: boolean }) => (traits.alpha ? 4 : traits.grey ? 1 : 3);

/** Bytes the blur stage holds for a picture of `size` (memory-plan.ts): the Gaussian's window and its rows. */
export function blurBytes(size: Dimensions, sigma: number, alpha: boolean): number {
  const channels = channelsOf({ alpha, grey: false });
  return gaussianBytes(size, channels, gaussianMask(sigma, MIN_AMPLITUDE), gridStep(sigma)) + 2 * 4 * channels * size.width + BAND_ROWS * size.width * 4;
}

/** The blur stage: `source` through a Gaussian of `sigma` as sharp's blur(sigma), in bands, holding a window of rows. */
export function blurRows(source: RowSource, sigma: number): RowSource {
  const { width, height, alpha } = source;
  const channels = channelsOf(source);
  const gaussian = new GaussianRows(width, height, channels, gaussianMask(sigma, MIN_AMPLITUDE), sigma);
  const input = new Float32Array(width * channels);
  const output = new Float32Array(width * channels);
  const out = new Uint8Array(BAND_ROWS * width * 4);
  const clamped = new Uint8ClampedArray(out.buffer);
  // Opaque rows keep alpha 255 where fromPlanes leaves it.
  if (!alpha) clamped.fill(255);
  let band: { words: Int32Array; row: number; rows: number } | null = null;
  const held = blurBytes({ width, height }, sigma, alpha);
  let y = 0;
  const pushRow = async () => {
    if (!band || band.row >= band.rows) {
      const next = await source.read();
      if (!next) throw new Error(`blur: the source ended before its ${height} rows`);
      band = { words: pixelWords(next.data), row: 0, rows: next.rows };
    }
    toPlanes(band.words, band.row++ * width, width, channels, input);
    gaussian.push(input);
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
        while (gaussian.wantsInput()) await pushRow();
        gaussian.emit(output);
        fromPlanes(output, width, channels, clamped, row * width * 4);
      }
      const result = { y, rows, data: out.subarray(0, rows * width * 4) };
      y += rows;
      return result;
    },
    heldBytes: () => source.heldBytes() + held,
    close: () => source.close(),
  };
}

/** One row of RGBA words as float planes: R (grey), R G B, or R G B premultiplied and A. */
function toPlanes(words: Int32Array, from: number, width: number, channels: number, into: Float32Array): void {
  for (let x = 0; x < width; x++) {
    const px = words[from + x];
    const r = px & 255;
    if (channels === 1) {
      into[x] = r;
      continue;
    }
    const g = (px >> 8) & 255;
    const b = (px >> 16) & 255;
    if (channels === 3) {
      into[x] = r;
      into[width + x] = g;
      into[2 * width + x] = b;
      continue;
    }
    const a = px >>> 24;
    into[x] = (r * a) / 255;
    into[width + x] = (g * a) / 255;
    into[2 * width + x] = (b * a) / 255;
    into[3 * width + x] = a;
  }
}

/**
 * Float planes back to RGBA bytes from out[to] (a clamped array rounds and clamps as it stores);
 * with alpha the colour is divided by it again (a pixel whose alpha rounds to 0 is 0, 0, 0, 0).
 */
function fromPlanes(planes: Float32Array, width: number, channels: number, out: Uint8ClampedArray, to: number): void {
  const [r, g, b, a] = [0, width, 2 * width, 3 * width];
  if (channels === 1) {
    for (let x = 0, o = to; x < width; x++, o += 4) out[o] = out[o + 1] = out[o + 2] = planes[x];
  } else if (channels === 3) {
    for (let x = 0, o = to; x < width; x++, o += 4) {
      out[o] = planes[r + x];
      out[o + 1] = planes[g + x];
      out[o + 2] = planes[b + x];
    }
  } else {
    for (let x = 0, o = to; x < width; x++, o += 4) {
      const alpha = planes[a + x];
      out[o + 3] = alpha;
      const scale = out[o + 3] === 0 ? 0 : 255 / alpha;
      out[o] = planes[r + x] * scale;
      out[o + 1] = planes[g + x] * scale;
      out[o + 2] = planes[b + x] * scale;
    }
  }
}
