/// <reference types="node" />
/**
 * The JPEG decoder's low-memory mode (a progressive file's coefficients packed, codecs/jpeg/memory.c)
 * against its normal mode on damaged files: a 6 MP progressive photo with bytes of its scans
 * overwritten must decode to the same pixels in both modes, or fail with the same error.
 */
import fc from 'fast-check';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import path from 'node:path';

import { openJpegDecode } from '../../src/image/formats/jpeg/decode';
import { readJpegHeader } from '../../src/image/formats/jpeg/header';
import { decoderLibjpegBytes, packedValuesBound } from '../../src/image/formats/jpeg/memory';

const PHOTO = path.resolve(import.meta.dirname, '../../../shared/corpus/photos/photo-12mp.jpg');

/** Every pixel of the decode, or the error's code; and libjpeg's peak. */
async function decode(bytes: Uint8Array, packed: boolean): Promise<{ outcome: string; pixels?: Buffer; peak?: number }> {
  try {
    const frame = readJpegHeader(bytes).frame;
    const lowMemory = packed ? { maxBytes: packedValuesBound(readJpegHeader(bytes).frame, bytes.byteLength) } : undefined;
    const source = await openJpegDecode(bytes, frame, { shrink: 1, region: null, lowMemory });
    const pixels = Buffer.alloc(source.width * source.height * 4);
    for (let band = await source.read(); band; band = await source.read()) pixels.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
    source.close();
    return { outcome: 'decoded', pixels, peak: source.libjpegPeakBytes() };
  } catch (error) {
    return { outcome: String((error as { code?: string }).code ?? error) };
  }
}

describe('progressive JPEG with its coefficients packed', () => {
  it('decodes damaged files as the unpacked decode does: the same pixels or the same error', { timeout: 120_000 }, async () => {
    const file = new Uint8Array(await sharp(PHOTO).resize(3000, 2000).jpeg({ quality: 85, progressive: true }).toBuffer());
    const frame = readJpegHeader(file).frame;
    // The packed mode's limit is below the unpacked buffer, so the store is used.
    expect(decoderLibjpegBytes(frame, 1, packedValuesBound(frame, file.byteLength))).toBeLessThan(decoderLibjpegBytes(frame, 1));
    const intact = [await decode(file, false), await decode(file, true)];
    expect(intact[1].pixels!.equals(intact[0].pixels!)).toBe(true);
    expect(intact[1].peak!).toBeLessThan(intact[0].peak! / 2);

    const damage = fc.array(fc.record({ at: fc.integer({ min: 1000, max: file.byteLength - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(damage, async (writes) => {
        const bytes = file.slice();
        for (const { at, byte } of writes) bytes[at] = byte;
        const [unpacked, packed] = [await decode(bytes, false), await decode(bytes, true)];
        expect(packed.outcome).toBe(unpacked.outcome);
        if (packed.pixels) expect(packed.pixels.equals(unpacked.pixels!)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
