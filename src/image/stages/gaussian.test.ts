import { describe, expect, it } from 'vitest';
import { GaussianRows } from '../../../test/support/filters-reference';
import { gaussianMask, gridStep } from './gaussian';

/*
 * The Gaussian as the TypeScript computed it (GaussianRows, test/support/filters-reference.ts),
 * which the kernels compute byte for byte (filter-kernels.test.ts): exact below sigma 8, within a
 * level on a grid above, bounded windows.
 */

/** The Gaussian of a `width` x `height` one-channel picture, row by row through GaussianRows. */
function blurred(picture: Float32Array, width: number, height: number, sigma: number, minAmplitude = 0.2): Float32Array {
  const gaussian = new GaussianRows(width, height, 1, gaussianMask(sigma, minAmplitude), sigma);
  const out = new Float32Array(width * height);
  let pushed = 0;
  for (let y = 0; y < height; y++) {
    while (gaussian.wantsInput()) gaussian.push(picture.subarray(pushed * width, ++pushed * width));
    gaussian.emit(out.subarray(y * width, (y + 1) * width));
  }
  expect(pushed).toBe(height);
  return out;
}

/** The same by the book: the whole picture, edge pixels repeated, every pixel, both axes. */
function reference(picture: Float32Array, width: number, height: number, sigma: number): Float32Array {
  const { radius, weights, scale } = gaussianMask(sigma, 0.2);
  const at = (x: number, y: number) => picture[Math.min(height - 1, Math.max(0, y)) * width + Math.min(width - 1, Math.max(0, x))];
  const across = new Float64Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) for (let t = -radius; t <= radius; t++) across[y * width + x] += weights[t + radius] * at(x + t, y);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let t = -radius; t <= radius; t++) sum += weights[t + radius] * across[Math.min(height - 1, Math.max(0, y + t)) * width + x];
      out[y * width + x] = sum / scale / scale;
    }
  }
  return out;
}

function noise(width: number, height: number, smooth: number): Float32Array {
  const data = new Float32Array(width * height);
  let state = 7;
  for (let i = 0; i < data.length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    data[i] = (state >>> 24) * (1 - smooth) + 128 * smooth + 60 * smooth * Math.sin(i / 37);
  }
  return data;
}

const maxError = (a: Float32Array, b: Float32Array) => a.reduce((worst, value, i) => Math.max(worst, Math.abs(value - b[i])), 0);

describe('gaussianMask: vips_gaussmat, separable, integer precision', () => {
  it.each([
    // exp(-1/2) = 0.61 -> 12; exp(-2) = 0.135, under 0.2 (blur) but not 0.1 (sharpen) -> 3.
    [1, 0.2, [12, 20, 12]],
    [1, 0.1, [3, 12, 20, 12, 3]],
    [0.6, 0.2, [5, 20, 5]],
    [1.5, 0.1, [3, 8, 16, 20, 16, 8, 3]],
  ])('sigma %f, minimum amplitude %f', (sigma, minAmplitude, weights) => {
    const mask = gaussianMask(sigma, minAmplitude);
    expect([...mask.weights]).toEqual(weights);
    expect(mask.scale).toBe(weights.reduce((a, b) => a + b));
  });

  it('is one tap below sigma 0.56 (sharp: no change), and 3,589 taps at sigma 1000', () => {
    expect(gaussianMask(0.3, 0.2).weights.length).toBe(1);
    expect(gaussianMask(0.55, 0.2).weights.length).toBe(1);
    expect(gaussianMask(1000, 0.2).weights.length).toBe(3589);
  });
});

describe('GaussianRows', () => {
  it('below sigma 8 computes every pixel exactly, streaming rows in and out', () => {
    const [width, height] = [37, 23];
    const picture = noise(width, height, 0);
    for (const sigma of [0.6, 1.5, 4]) {
      expect(gridStep(sigma)).toBe(1);
      expect(maxError(blurred(picture, width, height, sigma), reference(picture, width, height, sigma))).toBeLessThan(1e-3);
    }
  });

  it('from sigma 8 on a grid, interpolating within a level and 0.5 of one on average (55 dB), on half white noise', () => {
    // libvips' mask stops at a fifth of its peak: what it leaves is not quite as smooth as a Gaussian.
    const [width, height] = [181, 97];
    const picture = noise(width, height, 0.5);
    for (const sigma of [8, 13, 40]) {
      expect(gridStep(sigma)).toBeGreaterThan(1);
      const ours = blurred(picture, width, height, sigma);
      const exact = reference(picture, width, height, sigma);
      const rms = Math.sqrt(ours.reduce((sum, value, i) => sum + (value - exact[i]) ** 2, 0) / ours.length);
      expect(maxError(ours, exact), `sigma ${sigma}`).toBeLessThan(1);
      expect(rms, `sigma ${sigma}`).toBeLessThan(0.5);
    }
  });

  it('keeps a flat picture flat at any sigma, edges included', () => {
    const flat = new Float32Array(50 * 30).fill(200);
    for (const sigma of [1, 9, 1000]) expect(maxError(blurred(flat, 50, 30, sigma), flat)).toBeLessThan(1e-3);
  });

  it('holds a window of rows bounded whatever sigma is', () => {
    for (const sigma of [30, 300, 1000]) {
      const gaussian = new GaussianRows(1000, 3000, 1, gaussianMask(sigma, 0.2), sigma);
      let pushed = 0;
      while (gaussian.wantsInput()) {
        gaussian.push(new Float32Array(1000));
        pushed++;
      }
      // Before the first row comes out it has read the mask's reach below it, no more.
      expect(pushed).toBeLessThanOrEqual(gaussianMask(sigma, 0.2).radius + 2 * gridStep(sigma) + 1);
    }
  });
});
