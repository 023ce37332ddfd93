import { ALPHA_255 } from '../../src/image/stages/pixels';
import type { Contributions } from '../../src/image/stages/lanczos';

/*
 * The opaque Lanczos passes in TypeScript, as the pipeline ran them before codecs/kernels/resize.c
 * (lanczos.ts's arithmetic: 14-bit weights, a sum per channel started at half a unit, shifted and
 * clamped): the reference the WebAssembly kernels are checked against, byte for byte. Pixels are
 * packed 32-bit words, R in the low byte.
 */

const BITS = 14;
const HALF = 1 << (BITS - 1);

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

