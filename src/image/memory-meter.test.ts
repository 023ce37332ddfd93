import { describe, expect, it } from 'vitest';
import { corpus } from '../../test/support/image-testing';
import { liveCodecMemoryBytes } from './codecs/wasm-memory';
import { processImage } from './pipeline';

const LIMITS = { maxInputPixels: 40e6, maxOutputPixels: 40e6, memoryBudgetBytes: 100 * 2 ** 20 };
const MB = 1024 * 1024;

describe('pipeline memory', () => {
  it('reports the bytes a run held at its fullest: at least its input, decoded pixels and codec memory', async () => {
    const input = await corpus('photos/photo-1mp.jpg');
    const result = await processImage(input, { kind: 'resize', width: 400, keepAspectRatio: true, format: 'webp', quality: 80 }, LIMITS);
    const pixels = 1200 * 800 * 4;
    expect(result.peakBytes).toBeGreaterThan(input.byteLength + pixels);
  });

  it('holds no codec instance between jobs, even after a large one', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const unlimited = { ...LIMITS, memoryBudgetBytes: 4096 * MB };
    const result = await processImage(input, { kind: 'convert', format: 'webp', quality: 80 }, unlimited);
    // During the job libwebp alone grew far past the 48 MB frame it encoded.
    expect(result.peakBytes).toBeGreaterThan(2 * 48 * MB);
    expect(liveCodecMemoryBytes()).toBe(0);
  });
});
