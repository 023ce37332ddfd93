import { ALPHA_255 } from '../../src/image/stages/pixels';
import type { Contributions } from '../../src/image/stages/lanczos';

/*
 * The Lanczos passes in TypeScript, as the pipeline ran them before codecs/kernels/resize.c
 * (lanczos.ts's arithmetic: 14-bit weights, a sum per channel started at half a unit, shifted and
 * clamped): the reference the WebAssembly kernels are checked against, byte for byte. Pixels are
 * packed 32-bit words, R in the low byte. Each pass produces one row: the horizontal passes read
 * one input row, the vertical passes read the rows of a window (count[o] rows from `base`, `w`
 * words or `w * 4` values apart).
 */

const BITS = 14;
const HALF = 1 << (BITS - 1);
/** Largest premultiplied value: 255 * 255. */
const PMAX = 65025;

function clamp8(v: number): number {
  return (v & ~255) === 0 ? v : v < 0 ? 0 : 255;
}

export function hRowOpaque(src: Int32Array, rowBase: number, dst: Int32Array, d: number, dstW: number, c: Contributions): void {
  const { start, count, weights, stride } = c;
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

/** Output row y from the window rows starting at `base` (the row of c.start[y]), each `w` words. */
export function vRowOpaque(src: Int32Array, w: number, base: number, dst: Int32Array, d: number, y: number, c: Contributions): void {
  const { count, weights, stride } = c;
  const n = count[y];
  const wi = y * stride;
  const w2 = w & ~1;
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
