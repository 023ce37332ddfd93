/**
 * Image quality metrics for the benchmark and the encoder-quality tests, written out here so the
 * definition is exact:
 *
 * - SSIM (Wang, Bovik, Sheikh, Simoncelli 2004) on luma only, Y = 0.299 R + 0.587 G + 0.114 B
 *   (Rec. 601, as MATLAB's rgb2gray), 11x11 Gaussian window with sigma 1.5, K1 = 0.01,
 *   K2 = 0.03, L = 255, "valid" positions only (no padding: the 5-pixel border is not a window
 *   centre) and no downsampling; the result is the mean SSIM map.
 * - PSNR over R, G and B together, 10 log10(255^2 / MSE); Infinity for identical images.
 *
 * Both take interleaved 8-bit pixels with 3 or 4 channels (alpha is ignored).
 */

export interface RawImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
  channels: number;
}

export const SSIM_DESCRIPTION =
  'mean SSIM on luma (Y = 0.299R+0.587G+0.114B), 11x11 Gaussian window sigma 1.5, K1 0.01, K2 0.03, valid positions, no downsampling';
export const PSNR_DESCRIPTION = 'PSNR over R, G and B (8 bits)';

const WINDOW = 11;
const SIGMA = 1.5;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

function gaussianWeights(): Float64Array {
  const weights = new Float64Array(WINDOW);
  const centre = (WINDOW - 1) / 2;
  let sum = 0;
  for (let i = 0; i < WINDOW; i++) {
    weights[i] = Math.exp(-((i - centre) ** 2) / (2 * SIGMA * SIGMA));
    sum += weights[i];
  }
  for (let i = 0; i < WINDOW; i++) weights[i] /= sum;
  return weights;
}

function assertSameShape(a: RawImage, b: RawImage): void {
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`images differ in size: ${a.width}x${a.height} and ${b.width}x${b.height}`);
  }
  for (const image of [a, b]) {
    if (image.channels !== 3 && image.channels !== 4) throw new Error(`expected 3 or 4 channels, got ${image.channels}`);
    if (image.data.length < image.width * image.height * image.channels) throw new Error('pixel buffer too short');
  }
}

function luma(image: RawImage): Float32Array {
  const { data, width, height, channels } = image;
  const out = new Float32Array(width * height);
  for (let i = 0, p = 0; i < out.length; i++, p += channels) out[i] = 0.299 * data[p] + 0.587 * data[p + 1] + 0.114 * data[p + 2];
  return out;
}

/** Mean SSIM on luma (see the top of this file). */
export function ssim(a: RawImage, b: RawImage): number {
  let total = 0;
  let count = 0;
  forEachSsim(a, b, (_x, _y, value) => {
    total += value;
    count++;
  });
  return total / count;
}

/**
 * Mean SSIM (as `ssim`) of the windows centred on pixels that `inside(x, y)` selects, and of the
 * others: e.g. the pixels beside tile edges against the rest of the image.
 */
export function ssimInsideAndOutside(a: RawImage, b: RawImage, inside: (x: number, y: number) => boolean): { inside: number; outside: number } {
  const sums = { inside: 0, outside: 0 };
  const counts = { inside: 0, outside: 0 };
  forEachSsim(a, b, (x, y, value) => {
    const where = inside(x, y) ? 'inside' : 'outside';
    sums[where] += value;
    counts[where]++;
  });
  return { inside: sums.inside / counts.inside, outside: sums.outside / counts.outside };
}

/** Calls `visit` with the SSIM of every window, at the window's centre pixel. */
function forEachSsim(a: RawImage, b: RawImage, visit: (x: number, y: number, value: number) => void): void {
  assertSameShape(a, b);
  const { width, height } = a;
  if (width < WINDOW || height < WINDOW) throw new Error(`SSIM needs at least ${WINDOW}x${WINDOW} pixels`);
  const x = luma(a);
  const y = luma(b);
  const g = gaussianWeights();
  const outWidth = width - WINDOW + 1;

  // Ring of the last WINDOW horizontally filtered rows for each of the five moments.
  const ring = Array.from({ length: WINDOW }, () => Array.from({ length: 5 }, () => new Float64Array(outWidth)));
  const acc = Array.from({ length: 5 }, () => new Float64Array(outWidth));
  const half = (WINDOW - 1) / 2;

  for (let row = 0; row < height; row++) {
    const [mx, my, mxx, myy, mxy] = ring[row % WINDOW];
    const base = row * width;
    for (let col = 0; col < outWidth; col++) {
      let sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
      for (let k = 0; k < WINDOW; k++) {
        const w = g[k];
        const vx = x[base + col + k];
        const vy = y[base + col + k];
        sx += w * vx;
        sy += w * vy;
        sxx += w * vx * vx;
        syy += w * vy * vy;
        sxy += w * vx * vy;
      }
      mx[col] = sx;
      my[col] = sy;
      mxx[col] = sxx;
      myy[col] = syy;
      mxy[col] = sxy;
    }
    if (row < WINDOW - 1) continue;

    // Vertical filter over rows row-10 .. row: output row (row - 10).
    const [ax, ay, axx, ayy, axy] = acc;
    ax.fill(0), ay.fill(0), axx.fill(0), ayy.fill(0), axy.fill(0);
    for (let k = 0; k < WINDOW; k++) {
      const w = g[k];
      const [hx, hy, hxx, hyy, hxy] = ring[(row - WINDOW + 1 + k) % WINDOW];
      for (let col = 0; col < outWidth; col++) {
        ax[col] += w * hx[col];
        ay[col] += w * hy[col];
        axx[col] += w * hxx[col];
        ayy[col] += w * hyy[col];
        axy[col] += w * hxy[col];
      }
    }
    for (let col = 0; col < outWidth; col++) {
      const mux = ax[col];
      const muy = ay[col];
      const vx = axx[col] - mux * mux;
      const vy = ayy[col] - muy * muy;
      const cov = axy[col] - mux * muy;
      visit(col + half, row - half, ((2 * mux * muy + C1) * (2 * cov + C2)) / ((mux * mux + muy * muy + C1) * (vx + vy + C2)));
    }
  }
}

/** PSNR in dB over R, G and B; Infinity when the images are identical. */
export function psnr(a: RawImage, b: RawImage): number {
  assertSameShape(a, b);
  const n = a.width * a.height;
  let sum = 0;
  for (let i = 0, p = 0, q = 0; i < n; i++, p += a.channels, q += b.channels) {
    for (let c = 0; c < 3; c++) {
      const d = a.data[p + c] - b.data[q + c];
      sum += d * d;
    }
  }
  if (sum === 0) return Infinity;
  return 10 * Math.log10((255 * 255) / (sum / (3 * n)));
}
