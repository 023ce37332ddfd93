import { clamp } from './fit';
import type { Dimensions, RgbaImage } from './types';

/*
 * libvips' smartcrop (libvips/conversion/smartcrop.c), which sharp's position=entropy and
 * position=attention call, on a picture already resized to cover the box:
 * - entropy: repeatedly cut a strip off the left or right, and off the top or bottom, whichever
 *   has the lower entropy of its histogram, aiming for 8 steps on the axis that loses most;
 * - attention: on the picture reduced to 32x32, sum an edge score (Laplacian of Y), a skin score
 *   (closeness of the normalised XYZ colour to smartcrop.js's skin vector) and a saturation score
 *   (Lab a*), the last two only where Y > 5; blur, and centre the box on the maximum.
 * Both return the top-left corner of the kept box. Attention needs only the 32x32 reduction,
 * which the caller streams out of the decoder; entropy reads the whole resized picture.
 */
export function entropyCrop(image: RgbaImage, box: Dimensions): { x: number; y: number } {
  if (box.width > image.width || box.height > image.height) throw new Error('entropyCrop: the box is larger than the picture');
  let left = 0;
  let top = 0;
  let { width, height } = image;
  const maxSlice = Math.max(Math.ceil((width - box.width) / 8), Math.ceil((height - box.height) / 8));
  while (width > box.width || height > box.height) {
    const sliceWidth = Math.min(width - box.width, maxSlice);
    const sliceHeight = Math.min(height - box.height, maxSlice);
    if (sliceWidth > 0) {
      const leftScore = entropy(image, left, top, sliceWidth, height);
      const rightScore = entropy(image, left + width - sliceWidth, top, sliceWidth, height);
      width -= sliceWidth;
      if (leftScore < rightScore) left += sliceWidth;
    }
    if (sliceHeight > 0) {
      const topScore = entropy(image, left, top, width, sliceHeight);
      const bottomScore = entropy(image, left, top + height - sliceHeight, width, sliceHeight);
      height -= sliceHeight;
      if (topScore < bottomScore) top += sliceHeight;
    }
  }
  return { x: left, y: top };
}

/** vips_hist_find + vips_hist_entropy: the entropy in bits of the R, G and B histograms pooled. */
function entropy(image: RgbaImage, x0: number, y0: number, width: number, height: number): number {
  const counts = new Uint32Array(3 * 256);
  const { data } = image;
  for (let y = y0; y < y0 + height; y++) {
    for (let i = (y * image.width + x0) * 4, end = i + width * 4; i < end; i += 4) {
      counts[data[i]]++;
      counts[256 + data[i + 1]]++;
      counts[512 + data[i + 2]]++;
    }
  }
  const total = 3 * width * height;
  let bits = 0;
  for (const count of counts) {
    if (count === 0) continue;
    const p = count / total;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Attention looks at the picture reduced to this many pixels a side (the precision of its placement). */
export const ATTENTION_SIDE = 32;
const SKIN = [0.78, 0.57, 0.44];
/** D65 white in XYZ (Y = 100), as libvips' colour conversions use it. */
const WHITE_XYZ = [95.047, 100, 108.883];

/** `small`: the picture of size `picture` reduced to ATTENTION_SIDE x ATTENTION_SIDE. */
export function attentionCrop(small: RgbaImage, picture: Dimensions, box: Dimensions): { x: number; y: number } {
  if (small.width !== ATTENTION_SIDE || small.height !== ATTENTION_SIDE) throw new Error('attentionCrop: the reduced picture is not 32x32');
  const image = picture;
  const hscale = ATTENTION_SIDE / image.width;
  const vscale = ATTENTION_SIDE / image.height;
  const sigma = Math.max(Math.hypot(box.width * hscale, box.height * vscale) / 10, 1);
  const n = ATTENTION_SIDE * ATTENTION_SIDE;
  const xyz = new Float64Array(3 * n);
  for (let p = 0; p < n; p++) {
    const [r, g, b] = [0, 1, 2].map((c) => SRGB_TO_LINEAR[small.data[p * 4 + c]]);
    xyz[3 * p] = 100 * (0.4124 * r + 0.3576 * g + 0.1805 * b);
    xyz[3 * p + 1] = 100 * (0.2126 * r + 0.7152 * g + 0.0722 * b);
    xyz[3 * p + 2] = 100 * (0.0193 * r + 0.1192 * g + 0.9505 * b);
  }
  const score = new Float64Array(n);
  for (let y = 0; y < ATTENTION_SIDE; y++) {
    for (let x = 0; x < ATTENTION_SIDE; x++) {
      const p = y * ATTENTION_SIDE + x;
      const luma = (dx: number, dy: number) => xyz[3 * (clamp(y + dy, 0, ATTENTION_SIDE - 1) * ATTENTION_SIDE + clamp(x + dx, 0, ATTENTION_SIDE - 1)) + 1];
      const edge = Math.abs(5 * (4 * luma(0, 0) - luma(-1, 0) - luma(1, 0) - luma(0, -1) - luma(0, 1)));
      const [X, Y, Z] = [xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2]];
      let skin = 0;
      let saturation = 0;
      if (Y > 5) {
        const magnitude = Math.hypot(X, Y, Z);
        skin = 100 - 100 * Math.hypot(X / magnitude - SKIN[0], Y / magnitude - SKIN[1], Z / magnitude - SKIN[2]);
        saturation = 500 * (labF(X / WHITE_XYZ[0]) - labF(Y / WHITE_XYZ[1]));
      }
      score[p] = edge + skin + saturation;
    }
  }
  const { x, y } = maxPosition(gaussianBlur(score, ATTENTION_SIDE, sigma), ATTENTION_SIDE);
  const attentionX = Math.trunc(x / hscale);
  const attentionY = Math.trunc(y / vscale);
  return {
    x: clamp(attentionX - Math.floor(box.width / 2), 0, image.width - box.width),
    y: clamp(attentionY - Math.floor(box.height / 2), 0, image.height - box.height),
  };
}

const SRGB_TO_LINEAR = Float64Array.from({ length: 256 }, (_, v) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

function labF(t: number): number {
  return t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116;
}

/**
 * vips_gaussblur at its default integer precision: a separable mask of rint(20 * gaussian), cut
 * where the gaussian falls below 0.2, normalised by its sum; edges extended.
 */
function gaussianBlur(values: Float64Array, side: number, sigma: number): Float64Array {
  const twoSigma2 = 2 * sigma * sigma;
  let reach = 0;
  while (Math.exp(-(reach * reach) / twoSigma2) >= 0.2) reach++;
  const radius = Math.max(reach - 1, 0);
  const weights = Float64Array.from({ length: 2 * radius + 1 }, (_, i) => Math.round(20 * Math.exp(-((i - radius) ** 2) / twoSigma2)));
  const total = weights.reduce((sum, w) => sum + w, 0);
  const pass = (from: Float64Array, horizontal: boolean) => {
    const to = new Float64Array(from.length);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        let sum = 0;
        for (let k = -radius; k <= radius; k++) {
          const sx = horizontal ? clamp(x + k, 0, side - 1) : x;
          const sy = horizontal ? y : clamp(y + k, 0, side - 1);
          sum += weights[k + radius] * from[sy * side + sx];
        }
        to[y * side + x] = sum / total;
      }
    }
    return to;
  };
  return pass(pass(values, true), false);
}

function maxPosition(values: Float64Array, side: number): { x: number; y: number } {
  let best = 0;
  for (let p = 1; p < values.length; p++) if (values[p] > values[best]) best = p;
  return { x: best % side, y: Math.floor(best / side) };
}
