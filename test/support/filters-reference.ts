import { clippedSrgbEncoder } from '../../src/image/stages/colour/srgb';
import { gaussianMask, gridStep, type GaussianMask } from '../../src/image/stages/gaussian';
import { GREY_ENCODED as ENCODED, GREY_LINEAR as LINEAR } from '../../src/image/stages/grayscale';
import { pixelWords } from '../../src/image/stages/pixels';
import { forward, type RowSource } from '../../src/image/stages/rows';
import { CHANGE, labsLightness, LABS_SCALE, SHARPEN_MIN_AMPLITUDE, withLightness } from '../../src/image/stages/sharpen';

/*
 * The blur, sharpen and grayscale stages in TypeScript, as the pipeline ran them before
 * codecs/kernels/filters.c: the reference the WebAssembly kernels are checked against, byte for
 * byte (src/image/stages/filter-kernels.test.ts). A separable Gaussian over rows as they stream
 * past, as libvips' vips_gaussblur computes it (src/image/stages/gaussian.ts has the mask): run along
 * each row, then down each column, edge pixels repeated outwards, in floats, rounded once at the
 * end; from sigma 8 on a grid of every step-th row and column, Catmull-Rom interpolated between.
 * sharpen's colour arithmetic per pixel (L*, and a pixel with its L* moved) is the stage's own,
 * which the kernels hand pixels with partial transparency to.
 */

const BAND_ROWS = 16;
const MIN_AMPLITUDE = 0.2;
const channelsOf = (traits: { alpha: boolean; grey: boolean }) => (traits.alpha ? 4 : traits.grey ? 1 : 3);
const heldRows = (mask: GaussianMask, step: number) => mask.radius + 1 + (step > 1 ? 3 * step : 0) + 1;

/** Catmull-Rom weights at fraction `f` between the second and third of four samples. */
function cubicWeights(f: number, into: Float64Array): void {
  const f2 = f * f;
  const f3 = f2 * f;
  into[0] = (-f3 + 2 * f2 - f) / 2;
  into[1] = (3 * f3 - 5 * f2 + 2) / 2;
  into[2] = (-3 * f3 + 4 * f2 + f) / 2;
  into[3] = (f3 - f2) / 2;
}

/** Grid samples an axis of `size` pixels needs: every step-th from 0, and one before and two after where interpolated. */
const gridCount = (size: number, step: number) => Math.floor((size - 1) / step) + 1 + (step > 1 ? 3 : 0);

const windowRows = (mask: GaussianMask, step: number) => 2 * mask.radius + 1 + (step > 1 ? 3 * step : 0);

/**
 * The Gaussian of a picture given as rows of `channels` float planes (each row: channel 0's
 * `width` values, then channel 1's, ...): `push` input rows in order while `wantsInput()`, then
 * `emit` the next output row; repeat. Holds a window of rows of its grid's columns, never a frame.
 */
export class GaussianRows {
  private readonly step: number;
  private readonly margin: number;
  private readonly columns: number;
  /** The horizontally filtered rows, a ring of windowRows(). */
  private readonly window: Float32Array[];
  private readonly padded: Float32Array;
  /** Grid rows (all channels) by grid index + margin, a ring of four. */
  private readonly grid: Float32Array[];
  private readonly across: Float32Array;
  private readonly taps = new Float64Array(4);
  /** Catmull-Rom weights of each column's place between grid columns, four a place. */
  private readonly phases: Float64Array;
  private pushed = 0;
  /** Grid rows computed so far, counted from the first (index -margin). */
  private computed = 0;
  private emitted = 0;

  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly channels: number,
    private readonly mask: GaussianMask,
    sigma: number,
  ) {
    this.step = gridStep(sigma);
    this.margin = this.step > 1 ? 1 : 0;
    this.columns = gridCount(width, this.step);
    const size = this.columns * channels;
    this.window = Array.from({ length: windowRows(mask, this.step) }, () => new Float32Array(size));
    this.padded = new Float32Array(width + 2 * (mask.radius + 2 * this.step));
    this.grid = Array.from({ length: this.step > 1 ? 4 : 1 }, () => new Float32Array(size));
    this.across = new Float32Array(this.columns);
    this.phases = new Float64Array(4 * this.step);
    for (let phase = 0; phase < this.step; phase++) cubicWeights(phase / this.step, this.phases.subarray(4 * phase, 4 * phase + 4));
  }

  /** Whether the next output row still needs another input row. */
  wantsInput(): boolean {
    if (this.pushed >= this.height) return false;
    const lastGrid = this.step > 1 ? Math.floor(this.emitted / this.step) + 2 : this.emitted;
    return this.pushed <= Math.min(this.height - 1, lastGrid * this.step + this.mask.radius);
  }

  /** The next input row: `channels` planes of `width` values. */
  push(row: Float32Array): void {
    const { width, channels, step, margin, columns, padded, mask } = this;
    const { radius, weights } = mask;
    const pad = radius + 2 * step;
    const into = this.window[this.pushed % this.window.length];
    for (let c = 0; c < channels; c++) {
      const plane = row.subarray(c * width, (c + 1) * width);
      padded.fill(plane[0], 0, pad);
      padded.set(plane, pad);
      padded.fill(plane[width - 1], pad + width);
      const out = c * columns;
      if (step === 1) {
        // Every pixel: a pass over the row per pair of taps (the mask is symmetric), which V8 runs
        // faster than a short loop of taps per pixel.
        const row = into.subarray(out, out + width);
        const middle = weights[radius];
        for (let x = 0; x < width; x++) row[x] = middle * padded[pad + x];
        for (let t = 1; t <= radius; t++) {
          const weight = weights[radius + t];
          for (let x = 0, left = pad - t, right = pad + t; x < width; x++) row[x] += weight * (padded[left + x] + padded[right + x]);
        }
        continue;
      }
      for (let g = 0; g < columns; g++) {
        // Grid column g is pixel (g - margin) * step; the mask is symmetric, so taps pair up around it.
        const centre = (g - margin) * step + pad;
        let sum = weights[radius] * padded[centre];
        for (let t = 1; t <= radius; t++) sum += weights[radius + t] * (padded[centre - t] + padded[centre + t]);
        into[out + g] = sum;
      }
    }
    this.pushed++;
  }

  /** Writes the next output row (`channels` planes of `width`) into `out`. */
  emit(out: Float32Array): void {
    const y = this.emitted++;
    const { step, width, channels, columns, across, taps, phases, margin } = this;
    const norm = 1 / (this.mask.scale * this.mask.scale);
    if (step === 1) return this.gridRow(y, out, norm);
    const base = Math.floor(y / step);
    // Grid rows base-1 .. base+2 are interpolated between: each is made once, in order.
    while (this.computed <= base + 2 + margin) {
      this.gridRow(this.computed - margin, this.grid[this.computed % 4], norm);
      this.computed++;
    }
    cubicWeights((y - base * step) / step, taps);
    const [r0, r1, r2, r3] = [0, 1, 2, 3].map((i) => this.grid[(base - 1 + i + margin) % 4]);
    for (let c = 0; c < channels; c++) {
      const offset = c * columns;
      for (let g = 0; g < columns; g++) {
        const i = offset + g;
        across[g] = taps[0] * r0[i] + taps[1] * r1[i] + taps[2] * r2[i] + taps[3] * r3[i];
      }
      const plane = c * width;
      for (let x = 0; x < width; x++) {
        const gx = Math.floor(x / step);
        const w = (x - gx * step) * 4;
        // Grid column gx is at gx + margin; its four neighbours start one before it.
        const g = gx + margin - 1;
        out[plane + x] = phases[w] * across[g] + phases[w + 1] * across[g + 1] + phases[w + 2] * across[g + 2] + phases[w + 3] * across[g + 3];
      }
    }
  }

  /** Grid row j (pixel row j * step, clamped taps): the window's rows down the mask, into `out`. */
  private gridRow(j: number, out: Float32Array, norm: number): void {
    const { radius, weights } = this.mask;
    const centre = j * this.step;
    const size = this.columns * this.channels;
    const row = (y: number) => this.window[Math.min(this.height - 1, Math.max(0, y)) % this.window.length];
    const middle = row(centre);
    const weight = weights[radius] * norm;
    for (let i = 0; i < size; i++) out[i] = weight * middle[i];
    // The mask is symmetric: the rows t above and below share a weight.
    for (let t = 1; t <= radius; t++) {
      const above = row(centre - t);
      const below = row(centre + t);
      const paired = weights[radius + t] * norm;
      for (let i = 0; i < size; i++) out[i] += paired * (above[i] + below[i]);
    }
  }
}

/** The blur stage as it was: `source` through a Gaussian of `sigma` as sharp's blur(sigma), in bands, holding a window of rows. */
export function blurRowsReference(source: RowSource, sigma: number): RowSource {
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
    heldBytes: () => source.heldBytes(),
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

/** The sharpen stage as it was: `source` sharpened as sharp's sharpen({ sigma }), in bands, holding a window of rows. */
export function sharpenRowsReference(source: RowSource, sigma: number): RowSource {
  const { width, height } = source;
  const mask = gaussianMask(sigma, SHARPEN_MIN_AMPLITUDE);
  const ring = heldRows(mask, gridStep(sigma));
  const gaussian = new GaussianRows(width, height, 1, mask, sigma);
  // The rows the Gaussian has read ahead of the output: their pixels and their L* (LabS units).
  const originals = new Uint8Array(ring * width * 4);
  const lightnesses = new Int32Array(ring * width);
  const lightness = new Float32Array(width);
  const blurred = new Float32Array(width);
  const out = new Uint8Array(BAND_ROWS * width * 4);
  const encode = clippedSrgbEncoder();
  let band: { data: Uint8Array; row: number; rows: number } | null = null;
  let pushed = 0;
  let y = 0;
  const pushRow = async () => {
    if (!band || band.row >= band.rows) {
      const next = await source.read();
      if (!next) throw new Error(`sharpen: the source ended before its ${height} rows`);
      band = { data: next.data, row: 0, rows: next.rows };
    }
    const slot = pushed++ % ring;
    originals.set(band.data.subarray(band.row * width * 4, (band.row + 1) * width * 4), slot * width * 4);
    band.row++;
    const words = pixelWords(originals.subarray(slot * width * 4, (slot + 1) * width * 4));
    const stored = lightnesses.subarray(slot * width, (slot + 1) * width);
    for (let x = 0; x < width; x++) lightness[x] = stored[x] = labsLightness(words[x]);
    gaussian.push(lightness);
  };
  return {
    width,
    height,
    model: source.model,
    alpha: source.alpha,
    grey: source.grey,
    async read() {
      if (y >= height) {
        source.close();
        return null;
      }
      const rows = Math.min(BAND_ROWS, height - y);
      const words = pixelWords(out);
      for (let row = 0; row < rows; row++) {
        while (gaussian.wantsInput()) await pushRow();
        gaussian.emit(blurred);
        const slot = (y + row) % ring;
        const original = pixelWords(originals.subarray(slot * width * 4, (slot + 1) * width * 4));
        const before = lightnesses.subarray(slot * width, (slot + 1) * width);
        for (let x = 0; x < width; x++) {
          const L = before[x];
          const after = Math.min(32767, Math.max(0, L + CHANGE[L - Math.round(blurred[x]) + 32768]));
          words[row * width + x] = after === L ? original[x] : withLightness(original[x], (after - L) / LABS_SCALE, encode);
        }
      }
      const result = { y, rows, data: out.subarray(0, rows * width * 4) };
      y += rows;
      return result;
    },
    heldBytes: () => source.heldBytes(),
    close: () => source.close(),
  };
}

/** One pixel word's grey as libvips computes it (vips_col_scRGB2BW_8). */
export function greyOf(px: number): number {
  const luminance = 0.2126 * LINEAR[px & 255] + 0.7152 * LINEAR[(px >> 8) & 255] + 0.0722 * LINEAR[(px >> 16) & 255];
  const at = Math.min(255, Math.max(0, luminance * 255));
  const i = Math.trunc(at);
  return Math.round(ENCODED[i] + (ENCODED[i + 1] - ENCODED[i]) * (at - i));
}

/** The grayscale stage as it was: each band's pixels made grey in place. */
export function grayscaleRowsReference(source: RowSource): RowSource {
  if (source.grey) return source;
  return {
    ...forward(source),
    grey: true,
    async read() {
      const band = await source.read();
      if (!band) return band;
      const words = pixelWords(band.data);
      for (let i = 0; i < band.rows * source.width; i++) {
        const px = words[i];
        const grey = greyOf(px);
        words[i] = grey | (grey << 8) | (grey << 16) | (px & 0xff000000);
      }
      return band;
    },
  };
}
