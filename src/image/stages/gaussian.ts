/*
 * The Gaussian of libvips' vips_gaussblur, which sharp's blur(sigma) and the blur inside
 * vips_sharpen call: libvips' integer mask (vips_gaussmat: rint(20 exp(-x^2 / 2 sigma^2)) out to
 * where it falls below the minimum amplitude, divided by its sum) run along each row, then down each
 * column, with the picture's edge pixels repeated outwards (VIPS_EXTEND_COPY). The passes
 * (codecs/kernels/filters.c, laid out by filter-kernels.ts) work in floats and round once at the
 * end; libvips rounds to 8 bits after each pass, within a level of this.
 *
 * A wide mask is not run at every pixel: the blurred picture has nothing finer than sigma left in
 * it, so from sigma 8 on (gridStep) it is computed exactly on a grid of every `step`-th row and
 * column (step about sigma / 4) and the pixels between are Catmull-Rom interpolated from it. The
 * work a pixel then stays bounded whatever sigma is (a 1000 px blur costs what a 10 px one does),
 * and so does the window of rows: 2 * radius + 1 + 3 * step rows of the grid's columns.
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
