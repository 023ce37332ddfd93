import type { Dimensions } from '../types';

/*
 * A separable Gaussian over rows as they stream past, as libvips' vips_gaussblur (which sharp's
 * blur(sigma) and the blur inside vips_sharpen call) computes it: libvips' integer mask
 * (vips_gaussmat: rint(20 exp(-x^2 / 2 sigma^2)) out to where it falls below the minimum amplitude,
 * divided by its sum) run along each row, then down each column, with the picture's edge pixels
 * repeated outwards (VIPS_EXTEND_COPY). The passes work in floats and round once at the end; libvips
 * rounds to 8 bits after each pass, within a level of this.
 *
 * A wide mask is not run at every pixel: the blurred picture has nothing finer than sigma left in
 * it, so from sigma 8 on (gridStep) it is computed exactly on a grid of every `step`-th row and
 * column (step about sigma / 4) and the pixels between are Catmull-Rom interpolated from it. The
 * work a pixel then stays bounded whatever sigma is (a 1000 px blur costs what a 10 px one does),
 * and so does the window of rows: 2 * radius + 3 * step rows of the grid's columns.
 */

/** libvips' mask: half-width `radius`, integer weights from -radius to radius, and their sum. */
export interface GaussianMask {
  radius: number;
  weights: Float64Array;
  scale: number;
}

/** vips_gaussmat (separable, integer precision) for `sigma` and `minAmplitude`. */
export function gaussianMask(sigma: number, minAmplitude: number): GaussianMask {
  const sig2 = 2 * sigma * sigma;
  const maxX = Math.min(Math.max(0, Math.trunc(8 * sigma)), 5000);
  let x = 0;
  while (x < maxX && Math.exp(-(x * x) / sig2) >= minAmplitude) x++;
  const radius = Math.max(x - 1, 0);
  const weights = new Float64Array(2 * radius + 1);
  let scale = 0;
  for (let i = -radius; i <= radius; i++) {
    weights[i + radius] = Math.round(20 * Math.exp(-(i * i) / sig2));
    scale += weights[i + radius];
  }
  return { radius, weights, scale: scale || 1 };
}

/** Grid spacing: every pixel below sigma 8, then about a quarter of sigma. */
export function gridStep(sigma: number): number {
  return Math.max(1, Math.floor(sigma / 4));
}

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

/**
 * Bytes a GaussianRows holds for a picture `size` wide, `channels` planes: its window of rows, its
 * grid rows and row buffers (the memory plan counts them).
 */
export function gaussianBytes(size: Dimensions, channels: number, mask: GaussianMask, step: number): number {
  const columns = gridCount(size.width, step);
  const padded = size.width + 2 * (mask.radius + 2 * step);
  return 4 * (windowRows(mask, step) * columns * channels + 4 * columns * channels + padded + columns + size.width * channels);
}

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
