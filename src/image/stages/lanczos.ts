/*
 * The arithmetic of Lanczos-3 resampling of 8-bit RGBA (resize.ts runs it over rows as they
 * stream past; see the notes there):
 * - Output pixel o of an axis samples the input around centre (o + 0.5) * in/out - 0.5
 *   (pixel centres aligned, as libvips' vips_reduce does).
 * - When shrinking, the kernel is stretched by the scale factor (support 3 * in/out), so it
 *   low-pass filters like vips_reduce with kernel lanczos3; when enlarging the support is 3.
 * - Taps outside the image are clamped to the edge pixel (their weight goes to the edge).
 * - Weights are normalised to sum to 1 and stored as 14-bit fixed-point Int32 values, rounded
 *   cumulatively so every output's weights sum to exactly 1 << 14 (a constant stays constant).
 * - The passes over rows are WebAssembly (codecs/kernels/resize.c, through lanczos-kernels.ts; the
 *   TypeScript passes they replaced, test/support/lanczos-reference.ts, are the tests' reference):
 *   opaque pixels are filtered colour channels only, with an 8-bit intermediate (like vips_reduce
 *   on uchar); alpha stays exactly 255.
 * - Pixels with transparency are filtered premultiplied (16-bit intermediate holding colour *
 *   alpha and alpha * 255) and un-premultiplied at the end; a pixel whose alpha rounds to 0 comes
 *   out as 0,0,0,0.
 * Each pass produces one row: the horizontal passes read one input row, the vertical passes read
 * the rows of a window.
 */

const BITS = 14;
const ONE = 1 << BITS;
/** Lanczos parameter a. */
const LOBES = 3;

/** Precomputed filter of one axis: output o reads count[o] inputs from start[o]. */
export interface Contributions {
  start: Int32Array;
  count: Int32Array;
  /** weights[o * stride + k] for k < count[o], fixed point with BITS fraction bits. */
  weights: Int32Array;
  stride: number;
  /** Sum of count: the multiply-adds per output line. */
  taps: number;
}

function lanczos3(x: number): number {
  if (x === 0) return 1;
  if (x <= -LOBES || x >= LOBES) return 0;
  const px = Math.PI * x;
  return (LOBES * Math.sin(px) * Math.sin(px / LOBES)) / (px * px);
}

/**
 * Recent filters, shared (a Contributions is never written after it is made): a run's memory plan
 * sizes its resizes before the resize itself makes them (plan.ts, resizeScratchBytes), and a smart
 * crop filters the same axes again; each was computed up to seven times a run (2.6 ms of a 24 MP
 * -> 400x400 attention thumbnail). Only small filters are kept, so the isolate holds at most
 * CACHED_FILTERS * CACHED_FILTER_MAX_BYTES (256 KiB) beyond what runs count.
 */
const cachedFilters = new Map<string, Contributions>();
const CACHED_FILTERS = 8;
const CACHED_FILTER_MAX_BYTES = 32 * 1024;

/**
 * `scale`: input pixels per output pixel, where it is not inSize / outSize (after a box step, or
 * for a part of the input, resize.ts); `offset`: where in the input, in pixels, the output's first
 * edge lies (0: at the input's).
 */
export function contributions(inSize: number, outSize: number, scale = inSize / outSize, offset = 0): Contributions {
  const key = `${inSize} ${outSize} ${scale} ${offset}`;
  const cached = cachedFilters.get(key);
  if (cached) {
    cachedFilters.delete(key);
    cachedFilters.set(key, cached);
    return cached;
  }
  const made = computeContributions(inSize, outSize, scale, offset);
  if (made.weights.byteLength + made.start.byteLength + made.count.byteLength <= CACHED_FILTER_MAX_BYTES) {
    cachedFilters.set(key, made);
    if (cachedFilters.size > CACHED_FILTERS) cachedFilters.delete(cachedFilters.keys().next().value!);
  }
  return made;
}

function computeContributions(inSize: number, outSize: number, scale: number, offset: number): Contributions {
  const filterScale = Math.max(1, scale);
  const support = LOBES * filterScale;
  const stride = Math.min(inSize, Math.ceil(2 * support) + 1);
  const start = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * stride);
  const tmp = new Float64Array(stride);
  let taps = 0;

  for (let o = 0; o < outSize; o++) {
    const centre = offset + (o + 0.5) * scale - 0.5;
    // Taps strictly inside (centre - support, centre + support); the kernel is 0 at the ends.
    const lo = Math.floor(centre - support) + 1;
    const hi = Math.ceil(centre + support) - 1;
    const first = Math.max(0, lo);
    const last = Math.min(inSize - 1, hi);
    const span = last - first + 1;
    tmp.fill(0, 0, span);
    let sum = 0;
    for (let j = lo; j <= hi; j++) {
      const w = lanczos3((j - centre) / filterScale);
      const idx = j < first ? first : j > last ? last : j;
      tmp[idx - first] += w;
      sum += w;
    }
    const base = o * stride;
    if (!(Math.abs(sum) > 1e-9)) {
      // Cannot happen for Lanczos-3 with support >= 3; keep a sane fallback anyway.
      const nearest = Math.min(last, Math.max(first, Math.round(centre)));
      start[o] = nearest;
      count[o] = 1;
      weights[base] = ONE;
      taps += 1;
      continue;
    }
    // Cumulative rounding: the fixed-point weights sum to exactly ONE and the error of every
    // partial sum stays below half a unit, even with thousands of tiny weights.
    let acc = 0;
    let prev = 0;
    for (let k = 0; k < span; k++) {
      acc += tmp[k];
      const q = k === span - 1 ? ONE : Math.round((acc / sum) * ONE);
      weights[base + k] = q - prev;
      prev = q;
    }
    // Drop zero weights at both ends.
    let a = 0;
    let b = span - 1;
    while (a < b && weights[base + a] === 0) a++;
    while (b > a && weights[base + b] === 0) b--;
    if (a > 0) weights.copyWithin(base, base + a, base + b + 1);
    start[o] = first + a;
    count[o] = b - a + 1;
    taps += b - a + 1;
  }
  return { start, count, weights, stride, taps };
}
