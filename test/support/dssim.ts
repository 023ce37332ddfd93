/**
 * DSSIM (Kornel Lesiński's dssim 3.x, dssim-core), the perceptual metric the quality tests judge
 * quality=auto by: independent of the service's SSIMULACRA 2 (another colour space, another blur,
 * another pooling). 0 for identical pictures, larger as they differ (imgproxy's autoquality uses it).
 *
 * As dssim-core computes it for opaque RGBA: 8-bit sRGB to linear light, at five scales (each the
 * previous one averaged 2x2, sizes rounded down, while at least 8x8) to its L*a*b* variant (L
 * scaled by 1.05, a and b offset into 0..1), a and b blurred once more; per pixel SSIM from
 * blurred means, squares and cross products averaged over the three channels (C1 = 0.01^2,
 * C2 = 0.03^2); per scale one minus the mean absolute deviation of the map from its mean (raised to
 * 0.5^scale), weighted 0.028, 0.197, 0.322, 0.298, 0.155; DSSIM = 1 / SSIM - 1. Its blur is two
 * 3-tap passes [0.30875886, 0.3824828, 0.30875886] along each axis, edges clamped.
 */

import { srgbDecode } from '../../src/image/stages/colour/srgb';

export interface OpaquePicture {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

const WEIGHTS = [0.028, 0.197, 0.322, 0.298, 0.155];
const K_SIDE = Math.fround(0.30875886);
const K_CENTER = Math.fround(0.3824828);
const C1 = 0.01 * 0.01;
const C2 = 0.03 * 0.03;
const LINEAR = Float32Array.from({ length: 256 }, (_, v) => srgbDecode(v / 255));

interface Linear {
  r: Float32Array;
  g: Float32Array;
  b: Float32Array;
  width: number;
  height: number;
}

/** DSSIM of `distorted` against `original` (same size, alpha ignored: compare opaque pictures). */
export function dssim(original: OpaquePicture, distorted: OpaquePicture): number {
  if (original.width !== distorted.width || original.height !== distorted.height) throw new Error('dssim: the pictures differ in size');
  let a: Linear | null = toLinear(original);
  let b: Linear | null = toLinear(distorted);
  let sum = 0;
  let weights = 0;
  for (let scale = 0; scale < WEIGHTS.length && a && b; scale++) {
    sum += WEIGHTS[scale] * scaleScore(a, b, scale);
    weights += WEIGHTS[scale];
    a = downsample(a);
    b = downsample(b);
  }
  const ssim = sum / weights;
  return 1 / Math.max(ssim, Number.EPSILON) - 1;
}

function toLinear({ data, width, height }: OpaquePicture): Linear {
  const pixels = width * height;
  const out = { r: new Float32Array(pixels), g: new Float32Array(pixels), b: new Float32Array(pixels), width, height };
  for (let i = 0; i < pixels; i++) {
    out.r[i] = LINEAR[data[i * 4]];
    out.g[i] = LINEAR[data[i * 4 + 1]];
    out.b[i] = LINEAR[data[i * 4 + 2]];
  }
  return out;
}

/** Half the size (rounded down), each pixel the mean of four; null below 8x8, as dssim-core stops. */
function downsample(image: Linear): Linear | null {
  const { width, height } = image;
  if (width < 8 || height < 8) return null;
  const w = Math.floor(width / 2);
  const h = Math.floor(height / 2);
  const out = { r: new Float32Array(w * h), g: new Float32Array(w * h), b: new Float32Array(w * h), width: w, height: h };
  for (const c of ['r', 'g', 'b'] as const) {
    const src = image[c];
    const dst = out[c];
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = 2 * y * width + 2 * x;
        dst[y * w + x] = (src[i] + src[i + 1] + src[i + width] + src[i + width + 1]) * 0.25;
      }
    }
  }
  return out;
}

const D65 = [0.9505, 1.0, 1.089];
const EPSILON = 216 / 24389;
const K = 24389 / (27 * 116);

/** dssim-core's L*a*b*: three planes in about 0..1. */
function toLab(image: Linear): Float32Array[] {
  const pixels = image.width * image.height;
  const l = new Float32Array(pixels);
  const a = new Float32Array(pixels);
  const b = new Float32Array(pixels);
  const f = (v: number) => (v > EPSILON ? Math.cbrt(v) - 16 / 116 : K * v);
  for (let i = 0; i < pixels; i++) {
    const r = image.r[i];
    const g = image.g[i];
    const bl = image.b[i];
    const x = f((0.4124 * r + 0.3576 * g + 0.1805 * bl) / D65[0]);
    const y = f((0.2126 * r + 0.7152 * g + 0.0722 * bl) / D65[1]);
    const z = f((0.0193 * r + 0.1192 * g + 0.9505 * bl) / D65[2]);
    l[i] = y * 1.05;
    a[i] = (500 / 220) * (x - y) + 86.2 / 220;
    b[i] = (200 / 220) * (y - z) + 107.9 / 220;
  }
  return [l, a, b];
}

/**
 * Two clamped 3-tap passes along each axis. Each axis's two passes are applied at once (a 5-tap
 * kernel inside, the two clamped passes in turn for the two pixels at each edge): the same sums
 * but for single-precision rounding between the passes.
 */
function blur(plane: Float32Array, width: number, height: number): Float32Array {
  return twiceAlong(twiceAlong(plane, width, height, 1, width), width, height, width, height);
}

const TAP_OUTER = K_SIDE * K_SIDE;
const TAP_NEXT = 2 * K_SIDE * K_CENTER;
const TAP_MIDDLE = K_CENTER * K_CENTER + 2 * K_SIDE * K_SIDE;

/** The two 3-tap passes along rows (step 1) or columns (step width), the edge pixel repeated. */
function twiceAlong(src: Float32Array, width: number, height: number, step: number, length: number): Float32Array {
  const out = new Float32Array(src.length);
  const lines = step === 1 ? height : width;
  const lineStep = step === 1 ? width : 1;
  const once = (base: number, i: number) =>
    K_SIDE * src[base + Math.max(0, i - 1) * step] + K_CENTER * src[base + i * step] + K_SIDE * src[base + Math.min(length - 1, i + 1) * step];
  for (let line = 0; line < lines; line++) {
    const base = line * lineStep;
    const edge = (i: number) => {
      if (i < 0 || i >= length) return;
      out[base + i * step] = K_SIDE * once(base, Math.max(0, i - 1)) + K_CENTER * once(base, i) + K_SIDE * once(base, Math.min(length - 1, i + 1));
    };
    for (const i of [0, 1, length - 2, length - 1]) edge(i);
    for (let i = 2, at = base + 2 * step; i < length - 2; i++, at += step) {
      out[at] = TAP_OUTER * (src[at - 2 * step] + src[at + 2 * step]) + TAP_NEXT * (src[at - step] + src[at + step]) + TAP_MIDDLE * src[at];
    }
  }
  return out;
}

function multiply(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] * b[i];
  return out;
}

/** One scale's score: 1 - mean |avg - ssim| with avg the map's mean raised to 0.5^scale. */
function scaleScore(original: Linear, distorted: Linear, scale: number): number {
  const { width, height } = original;
  const planes1 = toLab(original);
  const planes2 = toLab(distorted);
  for (const planes of [planes1, planes2]) for (let c = 1; c < 3; c++) planes[c] = blur(planes[c], width, height);
  const stats = [0, 1, 2].map((c) => {
    const img1 = planes1[c];
    const img2 = planes2[c];
    return {
      mu1: blur(img1, width, height),
      mu2: blur(img2, width, height),
      sq1: blur(multiply(img1, img1), width, height),
      sq2: blur(multiply(img2, img2), width, height),
      cross: blur(multiply(img1, img2), width, height),
    };
  });
  const pixels = width * height;
  const map = new Float64Array(pixels);
  let sum = 0;
  for (let i = 0; i < pixels; i++) {
    let mu1Sq = 0;
    let mu2Sq = 0;
    let mu12 = 0;
    let sigma1 = 0;
    let sigma2 = 0;
    let sigma12 = 0;
    for (let c = 0; c < 3; c++) {
      const s = stats[c];
      const m1 = s.mu1[i];
      const m2 = s.mu2[i];
      mu1Sq += m1 * m1;
      mu2Sq += m2 * m2;
      mu12 += m1 * m2;
      sigma1 += s.sq1[i] - m1 * m1;
      sigma2 += s.sq2[i] - m2 * m2;
      sigma12 += s.cross[i] - m1 * m2;
    }
    mu1Sq /= 3;
    mu2Sq /= 3;
    mu12 /= 3;
    sigma1 /= 3;
    sigma2 /= 3;
    sigma12 /= 3;
    const ssim = ((2 * mu12 + C1) * (2 * sigma12 + C2)) / ((mu1Sq + mu2Sq + C1) * (sigma1 + sigma2 + C2));
    map[i] = ssim;
    sum += ssim;
  }
  const avg = Math.pow(Math.max(0, sum / pixels), Math.pow(0.5, scale));
  let deviation = 0;
  for (let i = 0; i < pixels; i++) deviation += Math.abs(avg - map[i]);
  return 1 - deviation / pixels;
}
