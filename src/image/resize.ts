import { boxShrinkFactor, boxShrinkOpaque, boxShrunkSize } from './box-shrink';
import { ALPHA_255, pixelWords } from './pixels';
import type { Dimensions, RgbaImage } from './types';

/*
 * Separable Lanczos-3 resampling of 8-bit RGBA, in plain TypeScript.
 *
 * - Output pixel o of an axis samples the input around centre (o + 0.5) * in/out - 0.5
 *   (pixel centres aligned, as libvips' vips_reduce does).
 * - When shrinking, the kernel is stretched by the scale factor (support 3 * in/out), so it
 *   low-pass filters like vips_reduce with kernel lanczos3; when enlarging the support is 3.
 * - Taps outside the image are clamped to the edge pixel (their weight goes to the edge).
 * - Weights are normalised to sum to 1 and stored as 14-bit fixed-point Int32 values, rounded
 *   cumulatively so every output's weights sum to exactly 1 << 14 (a constant stays constant).
 * - Fully opaque images are filtered as packed 32-bit words, colour channels only, with an
 *   8-bit intermediate (like vips_reduce on uchar); alpha stays exactly 255.
 * - Images with any alpha below 255 are filtered premultiplied (16-bit intermediate holding
 *   colour * alpha and alpha * 255) and un-premultiplied at the end; a pixel whose alpha
 *   rounds to 0 comes out as 0,0,0,0.
 * - Large reductions of opaque images start with a box filter down to at least twice the
 *   target size (box-shrink.ts), as vips_resize does with its default gap. Images with
 *   transparency skip it: averaging colour without alpha weighting would make fringes.
 * - The two passes share one intermediate typed array; the pass order doing fewer
 *   multiply-adds goes first, and an axis whose size does not change is not filtered.
 * - Enlarging is Lanczos-3 too, centre-aligned. libvips (sharp) enlarges differently: bicubic
 *   via vips_affine, half an output pixel off centre (libvips issues #517, #4841), so for
 *   upscales our output is close to, but deliberately not the same as, sharp's.
 */

const BITS = 14;
const ONE = 1 << BITS;
const HALF = 1 << (BITS - 1);
/** Largest premultiplied value: 255 * 255. */
const PMAX = 65025;
/** Lanczos parameter a. */
const LOBES = 3;

/** Precomputed filter of one axis: output o reads count[o] inputs from start[o]. */
interface Contributions {
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

function contributions(inSize: number, outSize: number): Contributions {
  const scale = inSize / outSize;
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

/** Resizes to exactly width x height with Lanczos-3 (see the notes at the top of this file). */
export function resize(image: RgbaImage, width: number, height: number): RgbaImage {
  let { width: srcW, height: srcH } = image;
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width < 1 || height < 1) {
    throw new Error(`resize: invalid target size ${width}x${height}`);
  }
  if (!Number.isSafeInteger(srcW) || !Number.isSafeInteger(srcH) || srcW < 1 || srcH < 1) {
    throw new Error(`resize: invalid source size ${srcW}x${srcH}`);
  }
  if (image.data.length !== srcW * srcH * 4) {
    throw new Error(`resize: data length ${image.data.length} does not match ${srcW}x${srcH} RGBA`);
  }
  if (width === srcW && height === srcH) return { data: new Uint8Array(image.data), width, height };

  let src = pixelWords(image.data);
  const opaque = isOpaque(src);
  const fx = boxShrinkFactor(srcW, width);
  const fy = boxShrinkFactor(srcH, height);
  if (opaque && (fx > 1 || fy > 1)) ({ words: src, width: srcW, height: srcH } = boxShrinkOpaque(src, srcW, srcH, fx, fy));
  const ch = width !== srcW ? contributions(srcW, width) : null;
  const cv = height !== srcH ? contributions(srcH, height) : null;
  const outBytes = new Uint8Array(width * height * 4);
  const result: RgbaImage = { data: outBytes, width, height };

  if (ch && cv) {
    // Multiply-adds of each order: a pass costs (lines it runs over) * (taps per line).
    const hFirst = srcH * ch.taps + width * cv.taps <= srcW * cv.taps + height * ch.taps;
    if (opaque) {
      const out = new Int32Array(outBytes.buffer);
      if (hFirst) {
        const tmp = new Int32Array(width * srcH);
        hPassOpaque(src, srcW, srcH, tmp, width, ch);
        vPassOpaque(tmp, width, out, height, cv);
      } else {
        const tmp = new Int32Array(srcW * height);
        vPassOpaque(src, srcW, tmp, height, cv);
        hPassOpaque(tmp, srcW, height, out, width, ch);
      }
    } else {
      const out = new Uint8ClampedArray(outBytes.buffer);
      if (hFirst) {
        const tmp = new Uint16Array(width * srcH * 4);
        hPassPremultiply(src, srcW, srcH, tmp, width, ch);
        vPassUnpremultiply(tmp, width, out, height, cv);
      } else {
        const tmp = new Uint16Array(srcW * height * 4);
        vPassPremultiply(src, srcW, tmp, height, cv);
        hPassUnpremultiply(tmp, srcW, height, out, width, ch);
      }
    }
    return result;
  }

  // Only one axis changes: one pass.
  if (opaque) {
    const out = new Int32Array(outBytes.buffer);
    if (ch) hPassOpaque(src, srcW, srcH, out, width, ch);
    else vPassOpaque(src, srcW, out, height, cv!);
  } else {
    const tmp = new Uint16Array(width * height * 4);
    if (ch) hPassPremultiply(src, srcW, srcH, tmp, width, ch);
    else vPassPremultiply(src, srcW, tmp, height, cv!);
    unpremultiply(tmp, new Uint8ClampedArray(outBytes.buffer));
  }
  return result;
}


/** Most bytes of the temporaries resize() allocates besides its input and output (memory-plan.ts). */
export function resizeScratchBytes(from: Dimensions, to: Dimensions): number {
  // With transparency: the premultiplied intermediate between the passes, 8 bytes a pixel.
  const premultiplied = 8 * Math.max(to.width * from.height, from.width * to.height);
  // Opaque: the box-shrunk copy (when there is one), then a 4-byte intermediate.
  const shrunk = boxShrunkSize(from, to);
  const boxed = shrunk.width !== from.width || shrunk.height !== from.height;
  const opaque = (boxed ? 4 * shrunk.width * shrunk.height : 0) + 4 * Math.max(to.width * shrunk.height, shrunk.width * to.height);
  return Math.max(premultiplied, opaque);
}

function isOpaque(px: Int32Array): boolean {
  for (let i = 0; i < px.length; i++) if (px[i] >>> 24 !== 255) return false;
  return true;
}

function clamp8(v: number): number {
  return (v & ~255) === 0 ? v : v < 0 ? 0 : 255;
}

function clamp16(v: number): number {
  return v < 0 ? 0 : v > PMAX ? PMAX : v;
}

// ---- opaque passes: packed words, colour channels only, alpha written as 255 ----

function hPassOpaque(src: Int32Array, srcW: number, rows: number, dst: Int32Array, dstW: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  let d = 0;
  for (let y = 0; y < rows; y++) {
    const rowBase = y * srcW;
    for (let x = 0; x < dstW; x++) {
      const n = count[x];
      const wi = x * stride;
      let p = rowBase + start[x];
      let r = HALF;
      let g = HALF;
      let b = HALF;
      const end = wi + n;
      let k = wi;
      for (; k + 1 < end; k += 2, p += 2) {
        const px = src[p];
        const w = weights[k];
        const px1 = src[p + 1];
        const w1 = weights[k + 1];
        r += (px & 255) * w + (px1 & 255) * w1;
        g += ((px >> 8) & 255) * w + ((px1 >> 8) & 255) * w1;
        b += ((px >> 16) & 255) * w + ((px1 >> 16) & 255) * w1;
      }
      if (k < end) {
        const px = src[p];
        const w = weights[k];
        r += (px & 255) * w;
        g += ((px >> 8) & 255) * w;
        b += ((px >> 16) & 255) * w;
      }
      dst[d++] = clamp8(r >> BITS) | (clamp8(g >> BITS) << 8) | (clamp8(b >> BITS) << 16) | ALPHA_255;
    }
  }
}

function vPassOpaque(src: Int32Array, w: number, dst: Int32Array, outRows: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  let d = 0;
  const w2 = w & ~1;
  for (let y = 0; y < outRows; y++) {
    const n = count[y];
    const wi = y * stride;
    const base = start[y] * w;
    let x = 0;
    for (; x < w2; x += 2) {
      let p = base + x;
      let r = HALF;
      let g = HALF;
      let b = HALF;
      let r1 = HALF;
      let g1 = HALF;
      let b1 = HALF;
      for (let k = 0; k < n; k++, p += w) {
        const px = src[p];
        const px1 = src[p + 1];
        const wt = weights[wi + k];
        r += (px & 255) * wt;
        g += ((px >> 8) & 255) * wt;
        b += ((px >> 16) & 255) * wt;
        r1 += (px1 & 255) * wt;
        g1 += ((px1 >> 8) & 255) * wt;
        b1 += ((px1 >> 16) & 255) * wt;
      }
      dst[d++] = clamp8(r >> BITS) | (clamp8(g >> BITS) << 8) | (clamp8(b >> BITS) << 16) | ALPHA_255;
      dst[d++] = clamp8(r1 >> BITS) | (clamp8(g1 >> BITS) << 8) | (clamp8(b1 >> BITS) << 16) | ALPHA_255;
    }
    for (; x < w; x++) {
      let p = base + x;
      let r = HALF;
      let g = HALF;
      let b = HALF;
      for (let k = 0; k < n; k++, p += w) {
        const px = src[p];
        const wt = weights[wi + k];
        r += (px & 255) * wt;
        g += ((px >> 8) & 255) * wt;
        b += ((px >> 16) & 255) * wt;
      }
      dst[d++] = clamp8(r >> BITS) | (clamp8(g >> BITS) << 8) | (clamp8(b >> BITS) << 16) | ALPHA_255;
    }
  }
}

// ---- premultiplied passes: colour * alpha and alpha * 255, both 0..65025 in a Uint16 ----

function hPassPremultiply(
  src: Int32Array,
  srcW: number,
  rows: number,
  dst: Uint16Array,
  dstW: number,
  c: Contributions,
): void {
  const { start, count, weights, stride } = c;
  let d = 0;
  for (let y = 0; y < rows; y++) {
    const rowBase = y * srcW;
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
}

function vPassPremultiply(src: Int32Array, w: number, dst: Uint16Array, outRows: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  let d = 0;
  for (let y = 0; y < outRows; y++) {
    const n = count[y];
    const wi = y * stride;
    const base = start[y] * w;
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
}

function hPassUnpremultiply(
  src: Uint16Array,
  srcW: number,
  rows: number,
  dst: Uint8ClampedArray,
  dstW: number,
  c: Contributions,
): void {
  const { start, count, weights, stride } = c;
  let d = 0;
  for (let y = 0; y < rows; y++) {
    const rowBase = y * srcW * 4;
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
}

function vPassUnpremultiply(src: Uint16Array, w: number, dst: Uint8ClampedArray, outRows: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
  const rowLen = w * 4;
  let d = 0;
  for (let y = 0; y < outRows; y++) {
    const n = count[y];
    const wi = y * stride;
    const base = start[y] * rowLen;
    for (let x = 0; x < rowLen; x += 4) {
      let p = base + x;
      let r = HALF;
      let g = HALF;
      let b = HALF;
      let a = HALF;
      for (let k = 0; k < n; k++, p += rowLen) {
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
}

function unpremultiply(src: Uint16Array, dst: Uint8ClampedArray): void {
  for (let i = 0; i < src.length; i += 4) writeUnpremultiplied(dst, i, src[i], src[i + 1], src[i + 2], src[i + 3]);
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

// ---- target size (docs: /work/shared/spec/decisions.md, "resize") ----

export interface ResizeRequest {
  width?: number;
  height?: number;
  keepAspectRatio: boolean;
}

/** n * num / den rounded half up, in exact integer arithmetic for the sizes in play; at least 1. */
function scaleRound(n: number, num: number, den: number): number {
  return Math.max(1, Math.floor((2 * n * num + den) / (2 * den)));
}

/** The largest size with the source's aspect ratio that fits inside `box` (up or down). */
export function fitWithin(src: Dimensions, box: Dimensions): Dimensions {
  // Compare box.width / src.width with box.height / src.height without floating point.
  if (box.width * src.height <= box.height * src.width) {
    return { width: box.width, height: Math.min(box.height, scaleRound(src.height, box.width, src.width)) };
  }
  return { width: Math.min(box.width, scaleRound(src.width, box.height, src.height)), height: box.height };
}

/**
 * Output size of a resize request:
 * - one side given: the other follows the aspect ratio (rounded, at least 1), whatever
 *   keepAspectRatio says;
 * - both given and keepAspectRatio: fit inside the width x height box, aspect kept
 *   (no crop, no padding);
 * - both given and not keepAspectRatio: exactly width x height.
 * The caller validates the parameters (1..12000); note a derived side is not capped here,
 * so the caller checks the result against its pixel limit.
 */
export function targetSize(src: Dimensions, request: ResizeRequest): Dimensions {
  const { width, height, keepAspectRatio } = request;
  for (const v of [src.width, src.height, width, height]) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) throw new Error(`targetSize: invalid size ${v}`);
  }
  if (width !== undefined && height !== undefined) {
    return keepAspectRatio ? fitWithin(src, { width, height }) : { width, height };
  }
  if (width !== undefined) return { width, height: scaleRound(src.height, width, src.width) };
  if (height !== undefined) return { width: scaleRound(src.width, height, src.height), height };
  throw new Error('targetSize: neither width nor height given');
}
