import { describe, expect, it } from 'vitest';
import { corpus } from '../../test/support/image-testing';
import { jpegCodec } from './codecs/jpeg';
import { webpCodec } from './codecs/webp';
import { processImage } from './pipeline';

const LIMITS = { maxInputPixels: 40e6, maxOutputPixels: 40e6 };
const MB = 1024 * 1024;

describe('pipeline memory', () => {
  it('reports the bytes a run held at its fullest: at least its input, decoded pixels and codec memory', async () => {
    const input = await corpus('photos/photo-1mp.jpg');
    const result = await processImage(input, { kind: 'resize', width: 400, keepAspectRatio: true, format: 'webp', quality: 80 }, LIMITS);
    const pixels = 1200 * 800 * 4;
    expect(result.peakBytes).toBeGreaterThan(input.byteLength + pixels);
  });

  it("gives a large job's codec memory back: the instances left afterwards are fresh and small", async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const result = await processImage(input, { kind: 'convert', format: 'webp', quality: 80 }, LIMITS);
    // During the job the decoder alone grew past the 48 MB frame it decoded.
    expect(result.peakBytes).toBeGreaterThan(2 * 48 * MB);
    // The fresh WebP encoder finishes starting a tick later.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(jpegCodec.memoryBytes!()).toBeLessThan(32 * MB);
    expect(webpCodec.memoryBytes!()).toBeLessThan(32 * MB);
  });
});
