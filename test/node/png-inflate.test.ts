/// <reference types="node" />
/**
 * The PNG decoder's inflate (our zlib build with a 64-bit bit buffer that reads 8 bytes ahead, and
 * rows inflated in batches: codecs/png) against every way zlib deflates: levels 0-9, its five
 * strategies, small memory levels and windows, over images with every filter, wide and narrow,
 * whose data is cut into IDAT chunks of any size down to one byte (so the input runs short at any
 * point of the stream). Each must decode to exactly the pixels it was made of.
 */
import { constants, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { expectedRgba, hashedSamples, pngFromZlib, scanlines, type PngSpec } from '../support/png-builder';
import { decodePng } from '../support/png-testing';

const STRATEGIES = [constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FIXED];

/** Samples with long runs (matches at every distance) and noise (literals) mixed by `noise`. */
function samples(bitDepth: 8 | 16, noise: number, seed: number): PngSpec['sample'] {
  const hashed = hashedSamples(bitDepth, seed);
  return (x, y, c) => ((x * 7 + y * 13 + c * 31 + seed) % 100 < noise ? hashed(x, y, c) : ((x >> 3) * 17 + (y >> 2) * 5 + c) & (bitDepth === 8 ? 255 : 65535));
}

const cases = fc.record({
  width: fc.integer({ min: 1, max: 700 }),
  height: fc.integer({ min: 1, max: 40 }),
  colourType: fc.constantFrom(2 as const, 6 as const),
  bitDepth: fc.constantFrom(8 as const, 16 as const),
  interlaced: fc.boolean(),
  noise: fc.integer({ min: 0, max: 100 }),
  seed: fc.nat(1000),
  filterSeed: fc.nat(4),
  level: fc.integer({ min: 0, max: 9 }),
  strategy: fc.constantFrom(...STRATEGIES),
  memLevel: fc.integer({ min: 1, max: 9 }),
  windowBits: fc.integer({ min: 9, max: 15 }),
  idatBytes: fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 17, max: 70_000 })),
});

describe('PNG image data deflated every way zlib can', () => {
  it('decodes to exactly the pixels it was made of, in IDAT chunks of any size', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const spec: PngSpec = {
          width: c.width,
          height: c.height,
          colourType: c.colourType,
          bitDepth: c.bitDepth,
          interlaced: c.interlaced,
          sample: samples(c.bitDepth, c.noise, c.seed),
          filter: (n) => (n * 7 + c.filterSeed) % 5,
          idatBytes: c.idatBytes,
        };
        const zlib = deflateSync(scanlines(spec), { level: c.level, strategy: c.strategy, memLevel: c.memLevel, windowBits: c.windowBits });
        const decoded = await decodePng(pngFromZlib(spec, new Uint8Array(zlib)));
        expect(Buffer.from(decoded.data).equals(Buffer.from(expectedRgba(spec)))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
