import { describe, expect, it } from 'vitest';
import { processImage } from '../../src/image/pipeline';
import { fixture } from './helpers';
import { decodeImage } from './images';

const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, memoryBudgetBytes: 100 * 2 ** 20 };

describe('an AVIF image sequence (avifenc: a red frame, then a blue one)', () => {
  it('is converted, cropped and stripped as its first frame', async () => {
    const input = await fixture('animated/red-then-blue.avif');
    const converted = await processImage(input, { steps: [], format: 'png', quality: 80 }, LIMITS);
    expect([converted.width, converted.height]).toEqual([32, 24]);
    const pixels = await decodeImage('png', converted.bytes);
    for (let i = 0; i < pixels.data.length; i += 4) {
      const [r, g, b] = pixels.data.subarray(i, i + 3);
      expect(r > 240 && g < 16 && b < 16, `pixel ${i / 4} is (${r}, ${g}, ${b}), not the red first frame`).toBe(true);
    }
    const cropped = await processImage(input, { steps: [{ op: 'crop', x: 8, y: 4, width: 16, height: 16 }], quality: 80 }, LIMITS);
    expect([cropped.format, cropped.width, cropped.height]).toEqual(['avif', 16, 16]);
    const stripped = await processImage(input, { steps: [{ op: 'remove-metadata' }], quality: 80 }, LIMITS);
    expect([stripped.format, stripped.width, stripped.height]).toEqual(['avif', 32, 24]);
  });
});
