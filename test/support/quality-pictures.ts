/**
 * Deterministic pictures and distortions for the perceptual metrics' tests (src/image/quality,
 * test/support/dssim.ts), whose scores by the reference implementations (libjxl's ssimulacra2,
 * dssim 3.5) are recorded in the tests: the same pixels are made here for both.
 */
import type { RgbaImage } from '../../src/image/types';
import { xorshift } from './xorshift';

/** Opaque gradients, a few hard edges and disks, and mild noise: something like a photo's structure. */
export function texturedPicture(width: number, height: number, seed = 7): RgbaImage & { data: Uint8Array } {
  const data = new Uint8Array(width * height * 4);
  const random = xorshift(seed);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const u = x / width;
      const v = y / height;
      const disk = (x - width * 0.6) ** 2 + (y - height * 0.4) ** 2 < (Math.min(width, height) * 0.2) ** 2;
      const stripe = Math.floor(x / 6) % 2 === 0 && v > 0.7;
      const noise = (random() % 17) - 8;
      const r = disk ? 220 : stripe ? 30 : 255 * u * (1 - v) + 40 * Math.sin(y / 5);
      const g = disk ? 60 : stripe ? 200 : 180 * v + 50 * Math.cos(x / 9);
      const b = disk ? 90 : stripe ? 90 : 120 + 100 * Math.sin((x + y) / 23);
      data[i] = clamp(r + noise);
      data[i + 1] = clamp(g + noise);
      data[i + 2] = clamp(b + noise);
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}

/** A metric fed rows of two pictures (src/image/quality's Ssimulacra2 and Ssimulacra2Kernel). */
export interface RowMetric {
  push(original: Uint8Array, distorted: Uint8Array, rows: number): void;
  score(): number;
}

/** The score of two whole pictures, pushed in bands whose heights cycle through `bands`. */
export function scoreInBands(Metric: new (width: number, height: number) => RowMetric, original: RgbaImage, distortedPicture: RgbaImage, bands = [original.height]): number {
  const metric = new Metric(original.width, original.height);
  const stride = original.width * 4;
  for (let y = 0, i = 0; y < original.height; i++) {
    const rows = Math.min(bands[i % bands.length], original.height - y);
    metric.push(original.data.subarray(y * stride) as Uint8Array, distortedPicture.data.subarray(y * stride) as Uint8Array, rows);
    y += rows;
  }
  return metric.score();
}

export type Distortion = 'blur' | 'noise' | 'banding' | 'shift';

/** `picture` blurred (3x3 box), noisier (+-12), reduced to 8 levels a channel, or brighter by 6. */
export function distorted(picture: RgbaImage, distortion: Distortion): RgbaImage & { data: Uint8Array } {
  const { width, height } = picture;
  const src = picture.data;
  const data = new Uint8Array(src.length);
  const random = xorshift(99);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      for (let c = 0; c < 3; c++) {
        let value = src[i + c];
        if (distortion === 'blur') {
          let sum = 0;
          for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) sum += src[(clampTo(y + dy, height) * width + clampTo(x + dx, width)) * 4 + c];
          value = Math.round(sum / 9);
        } else if (distortion === 'noise') value += (random() % 25) - 12;
        else if (distortion === 'banding') value = Math.round(Math.round((value / 255) * 7) * (255 / 7));
        else value += 6;
        data[i + c] = clamp(value);
      }
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}

const clamp = (value: number) => Math.max(0, Math.min(255, Math.round(value)));
const clampTo = (value: number, size: number) => Math.max(0, Math.min(size - 1, value));
