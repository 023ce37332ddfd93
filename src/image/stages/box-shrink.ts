import { ALPHA_255 } from './pixels';
import type { Dimensions } from '../types';

/*
 * The first step of a large reduction, as libvips' vips_resize does it with its default
 * "reducing gap" of 2 (Pillow's reducing_gap works the same way): a box filter shrinks each axis
 * by an integer factor, only so far that at least twice the target size is left, and Lanczos-3
 * then does the final reduction, which is what decides the quality. A 4000 px wide photo going
 * to 1000 px is averaged 2x2 first, so Lanczos reads 12 taps a pixel instead of 24 on an image a
 * quarter the size.
 */

/** vips_resize's default gap: the box filter stops at twice the target size or more. */
const REDUCING_GAP = 2;

/** The integer factor the box filter shrinks one axis by (1: no box step). */
export function boxShrinkFactor(inSize: number, outSize: number): number {
  return Math.max(1, Math.floor(inSize / (outSize * REDUCING_GAP)));
}

/** Size after the box step: a last, partial box still makes a pixel (libvips' "ceil" mode). */
export function boxShrunkSize(from: Dimensions, to: Dimensions): Dimensions {
  return {
    width: Math.ceil(from.width / boxShrinkFactor(from.width, to.width)),
    height: Math.ceil(from.height / boxShrinkFactor(from.height, to.height)),
  };
}

/**
 * Averages fx x fy boxes of opaque RGBA words (R in the low byte) one source row at a time: `add`
 * rows until `full`, then `take` the averaged row (rounded to nearest). Boxes cut by the right or
 * bottom edge average the pixels they have (`take` on a partial box). Box centres sit at
 * (o + 0.5) * f - 0.5, the centre-aligned grid the Lanczos step uses too.
 */
export class BoxRowShrinker {
  readonly width: number;
  /** Float64 sums stay exact however large the box (4200 x 4200 pixels of 255 already pass 2^32). */
  private readonly sums: Float64Array;
  private rows = 0;

  constructor(
    private readonly srcWidth: number,
    private readonly fx: number,
    private readonly fy: number,
  ) {
    this.width = Math.ceil(srcWidth / fx);
    this.sums = new Float64Array(this.width * 3);
  }

  get full(): boolean {
    return this.rows === this.fy;
  }

  get pending(): number {
    return this.rows;
  }

  add(src: Int32Array, offset: number): void {
    const { sums, fx } = this;
    const rowEnd = offset + this.srcWidth;
    let i = offset;
    for (let s = 0; s < sums.length; s += 3) {
      const end = Math.min(i + fx, rowEnd);
      let r = 0;
      let g = 0;
      let b = 0;
      for (; i < end; i++) {
        const px = src[i];
        r += px & 255;
        g += (px >> 8) & 255;
        b += (px >> 16) & 255;
      }
      sums[s] += r;
      sums[s + 1] += g;
      sums[s + 2] += b;
    }
    this.rows++;
  }

  /** Writes the average of the rows added since the last take to out[offset..]; starts a new box row. */
  take(out: Int32Array, offset: number): void {
    const { sums, fx, rows, srcWidth } = this;
    for (let ox = 0, s = 0, d = offset; ox < this.width; ox++, s += 3) {
      const count = rows * (Math.min(srcWidth, (ox + 1) * fx) - ox * fx);
      const half = count / 2;
      const r = Math.floor((sums[s] + half) / count);
      const g = Math.floor((sums[s + 1] + half) / count);
      const b = Math.floor((sums[s + 2] + half) / count);
      out[d++] = r | (g << 8) | (b << 16) | ALPHA_255;
    }
    sums.fill(0);
    this.rows = 0;
  }
}

/** The whole-image form of BoxRowShrinker: fx x fy boxes of an opaque srcW x srcH image. */
export function boxShrinkOpaque(src: Int32Array, srcW: number, srcH: number, fx: number, fy: number): { words: Int32Array; width: number; height: number } {
  const shrinker = new BoxRowShrinker(srcW, fx, fy);
  const width = shrinker.width;
  const height = Math.ceil(srcH / fy);
  const out = new Int32Array(width * height);
  let row = 0;
  for (let y = 0; y < srcH; y++) {
    shrinker.add(src, y * srcW);
    if (shrinker.full || y === srcH - 1) shrinker.take(out, width * row++);
  }
  return { words: out, width, height };
}
