import { describe, expect, it } from 'vitest';
import { corpus } from '../../test/support/image-testing';
import { liveCodecMemoryBytes } from './codecs/wasm-memory';
import { processImage } from './pipeline';

const LIMITS = { maxInputPixels: 40e6, maxOutputPixels: 40e6, memoryBudgetBytes: 100 * 2 ** 20 };
const MB = 1024 * 1024;

describe('pipeline memory', () => {
  it('reports the bytes a run held at its fullest: at least its input and the encoder\'s picture', async () => {
    const input = await corpus('photos/photo-1mp.jpg');
    const result = await processImage(input, { steps: [{ op: 'resize', width: 400, keepAspectRatio: true }], format: 'webp', quality: 80 }, LIMITS);
    // libwebp holds the 400x267 picture as YUV 4:2:0 inside an instance of at least 1 MiB.
    expect(result.peakBytes).toBeGreaterThan(input.byteLength + MB);
    expect(result.peakBytes).toBeLessThan(input.byteLength + 8 * MB);
  });

  it('holds no codec instance between jobs, even after a large one', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const unlimited = { ...LIMITS, memoryBudgetBytes: 4096 * MB };
    const result = await processImage(input, { steps: [], format: 'webp', quality: 80 }, unlimited);
    // libwebp held the 12 MP picture as YUV 4:2:0 (18 MB) and its token buffer; no frame anywhere.
    expect(result.peakBytes).toBeGreaterThan(input.byteLength + 18 * MB);
    expect(result.peakBytes).toBeLessThan(100 * MB);
    expect(liveCodecMemoryBytes()).toBe(0);
  });
});
