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
 * - Opaque pixels are filtered in WebAssembly (codecs/kernels/resize.c, lanczos-kernels.ts), colour
 *   channels only, with an 8-bit intermediate (like vips_reduce on uchar); alpha stays exactly 255.
 * - Pixels with transparency are filtered premultiplied (16-bit intermediate holding colour *
 *   alpha and alpha * 255) and un-premultiplied at the end; a pixel whose alpha rounds to 0 comes
 *   out as 0,0,0,0.
 * Each pass below produces one row: the horizontal passes read one input row, the vertical passes
 * read the rows of a window (count[o] rows from `base`, `w` words or `w * 4` values apart).
 */

const BITS = 14;
const ONE = 1 << BITS;
const HALF = 1 << (BITS - 1);
/** Largest premultiplied value: 255 * 255. */
const PMAX = 65025;
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

/** `scale`: input pixels per output pixel, where it is not inSize / outSize (after a box step, resize.ts). */
export function contributions(inSize: number, outSize: number, scale = inSize / outSize): Contributions {
  const key = `${inSize} ${outSize} ${scale}`;
  const cached = cachedFilters.get(key);
  if (cached) {
    cachedFilters.delete(key);
    cachedFilters.set(key, cached);
    return cached;
  }
  const made = computeContributions(inSize, outSize, scale);
  if (made.weights.byteLength + made.start.byteLength + made.count.byteLength <= CACHED_FILTER_MAX_BYTES) {
    cachedFilters.set(key, made);
    if (cachedFilters.size > CACHED_FILTERS) cachedFilters.delete(cachedFilters.keys().next().value!);
  }
  return made;
}

function computeContributions(inSize: number, outSize: number, scale: number): Contributions {
  const filterScale = Math.max(1, scale);
  const support = LOBES * filterScale;
  const stride = Math.min(inSize, Math.ceil(2 * support) + 1);
  const start = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * stride);
  const tmp = new Float64Array(stride);
  let taps = 0;

  for (let o = 0; o < outSize; o++) {
    const centre = (o + 0.5) * scale - 0.5;
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

function clamp16(v: number): number {
  return v < 0 ? 0 : v > PMAX ? PMAX : v;
}

// ---- premultiplied: colour * alpha and alpha * 255, both 0..65025 in a Uint16 ----

export function hRowPremultiply(src: Int32Array, rowBase: number, dst: Uint16Array, d: number, dstW: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  for (let x = 0; x < dstW; x++) {
    const n = count[x];
    const wi = x * stride;
    let p = rowBase + start[x];
    let r = HALF;
    let g = HALF;
    let b = HALF;
    let a = 0;
    const end = wi + n;
    let k = wi;
    for (; k + 1 < end; k += 2, p += 2) {
      const px = src[p];
      const wa = weights[k] * (px >>> 24);
      const px1 = src[p + 1];
      const wa1 = weights[k + 1] * (px1 >>> 24);
      r += (px & 255) * wa + (px1 & 255) * wa1;
      g += ((px >> 8) & 255) * wa + ((px1 >> 8) & 255) * wa1;
      b += ((px >> 16) & 255) * wa + ((px1 >> 16) & 255) * wa1;
      a += wa + wa1;
    }
    if (k < end) {
      const px = src[p];
      const wa = weights[k] * (px >>> 24);
      r += (px & 255) * wa;
      g += ((px >> 8) & 255) * wa;
      b += ((px >> 16) & 255) * wa;
      a += wa;
    }
    dst[d] = clamp16(r >> BITS);
    dst[d + 1] = clamp16(g >> BITS);
    dst[d + 2] = clamp16(b >> BITS);
    dst[d + 3] = clamp16((a * 255 + HALF) >> BITS);
    d += 4;
  }
}

export function vRowPremultiply(src: Int32Array, w: number, base: number, dst: Uint16Array, d: number, y: number, c: Contributions): void {
  const { count, weights, stride } = c;
  const n = count[y];
  const wi = y * stride;
  for (let x = 0; x < w; x++) {
    let p = base + x;
    let r = HALF;
    let g = HALF;
    let b = HALF;
    let a = 0;
    for (let k = 0; k < n; k++, p += w) {
      const px = src[p];
      const wa = weights[wi + k] * (px >>> 24);
      r += (px & 255) * wa;
      g += ((px >> 8) & 255) * wa;
      b += ((px >> 16) & 255) * wa;
      a += wa;
    }
    dst[d] = clamp16(r >> BITS);
    dst[d + 1] = clamp16(g >> BITS);
    dst[d + 2] = clamp16(b >> BITS);
    dst[d + 3] = clamp16((a * 255 + HALF) >> BITS);
    d += 4;
  }
}

export function hRowUnpremultiply(src: Uint16Array, rowBase: number, dst: Uint8ClampedArray, d: number, dstW: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  for (let x = 0; x < dstW; x++) {
    const n = count[x];
    const wi = x * stride;
    let p = rowBase + start[x] * 4;
    let r = HALF;
    let g = HALF;
    let b = HALF;
    let a = HALF;
    for (let k = 0; k < n; k++, p += 4) {
      const w = weights[wi + k];
      r += src[p] * w;
      g += src[p + 1] * w;
      b += src[p + 2] * w;
      a += src[p + 3] * w;
    }
    writeUnpremultiplied(dst, d, r >> BITS, g >> BITS, b >> BITS, a >> BITS);
    d += 4;
  }
}

/** Output row y from premultiplied window rows starting at `base`, each `rowLength` (w * 4) values. */
export function vRowUnpremultiply(src: Uint16Array, rowLength: number, base: number, dst: Uint8ClampedArray, d: number, y: number, c: Contributions): void {
  const { count, weights, stride } = c;
  const n = count[y];
  const wi = y * stride;
  for (let x = 0; x < rowLength; x += 4) {
    let p = base + x;
    let r = HALF;
    let g = HALF;
    let b = HALF;
    let a = HALF;
    for (let k = 0; k < n; k++, p += rowLength) {
      const wt = weights[wi + k];
      r += src[p] * wt;
      g += src[p + 1] * wt;
      b += src[p + 2] * wt;
      a += src[p + 3] * wt;
    }
    writeUnpremultiplied(dst, d, r >> BITS, g >> BITS, b >> BITS, a >> BITS);
    d += 4;
  }
}

export function unpremultiplyRow(src: Uint16Array, s: number, dst: Uint8ClampedArray, d: number, values: number): void {
  for (let i = 0; i < values; i += 4) writeUnpremultiplied(dst, d + i, src[s + i], src[s + i + 1], src[s + i + 2], src[s + i + 3]);
}

/**
 * pr/pg/pb are colour * alpha and pa is alpha * 255 (all nominally 0..65025; ringing may push
 * them outside). The clamped array rounds and clamps the stores to 0..255. A pixel whose
 * alpha rounds to 0 is written as 0,0,0,0.
 */
function writeUnpremultiplied(dst: Uint8ClampedArray, d: number, pr: number, pg: number, pb: number, pa: number): void {
  if (pa < 128) {
    dst[d] = 0;
    dst[d + 1] = 0;
    dst[d + 2] = 0;
    dst[d + 3] = 0;
    return;
  }
  const inv = 255 / pa;
  dst[d] = pr * inv;
  dst[d + 1] = pg * inv;
  dst[d + 2] = pb * inv;
  dst[d + 3] = pa / 255;
}
