import { expect, it } from 'vitest';
import { largeInput } from '../../support/image-testing';
import { describeEdgeOf } from './edge';

// The 48 MiB upload held whole beside AVIF's tiles and WebP's picture, and its lossless strip.
describeEdgeOf('png-24mp-zlib6.png', ['convert to avif', 'convert to webp', 'remove-metadata']);

it('has an input as large as the plan allows: at least 45 MB, at most 50 MiB', async () => {
  const png = await largeInput('png-24mp-zlib6.png');
  expect(png.byteLength).toBeGreaterThanOrEqual(45e6);
  expect(png.byteLength).toBeLessThanOrEqual(50 * 2 ** 20);
});
