import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertWithinPixelLimit } from '../../limits';
import { corpus, expectAppError, mutated, prefixLengths, resultOrAppError, WEBPS } from '../../../../test/support/image-testing';
import { webpChunks } from './riff';
import { readDimensions } from '../../../../test/support/formats';

function chunk(type: string, data: number[]): number[] {
  const n = data.length;
  return [...type].map((c) => c.charCodeAt(0)).concat([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24], data, n & 1 ? [0] : []);
}

function riff(...chunks: number[][]): Uint8Array {
  const body = chunks.flat();
  const n = body.length + 4;
  return new Uint8Array([0x52, 0x49, 0x46, 0x46, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24, 0x57, 0x45, 0x42, 0x50, ...body]);
}

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];
const vp8x = (width: number, height: number, flags = 0) => chunk('VP8X', [flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);
const vp8l = (width: number, height: number, version = 0) => {
  const bits = (width - 1) | ((height - 1) << 14) | (version << 29);
  return chunk('VP8L', [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >>> 24, 0, 0, 0]);
};
const vp8 = (widthField: number, heightField: number, frameTag = 0x10) =>
  chunk('VP8 ', [frameTag, 0, 0, 0x9d, 0x01, 0x2a, widthField & 0xff, widthField >> 8, heightField & 0xff, heightField >> 8, 0, 0]);

describe('readDimensions webp', () => {
  it('reads the size of every corpus WebP (VP8, VP8L, VP8X)', async () => {
    for (const [path, [width, height]] of Object.entries(WEBPS)) {
      expect(readDimensions('webp', await corpus(path)), path).toEqual({ width, height });
    }
  });

  it('gives the full size or UNSUPPORTED_FORMAT for every prefix', async () => {
    for (const path of Object.keys(WEBPS)) {
      const bytes = await corpus(path);
      for (const n of prefixLengths(bytes.length, 128, 16)) {
        const dims = resultOrAppError(() => readDimensions('webp', bytes.subarray(0, n)));
        if (dims) expect(dims, `${path} prefix ${n}`).toEqual({ width: WEBPS[path][0], height: WEBPS[path][1] });
        if (n < 25) expect(dims, `${path} prefix ${n}`).toBeUndefined(); // VP8L needs 25 bytes, VP8 30
      }
    }
  });

  it('reads pixel-bomb headers exactly, so the limit check rejects them', () => {
    const canvas = readDimensions('webp', riff(vp8x(16384, 16384), vp8l(16384, 16384)));
    expect(canvas).toEqual({ width: 16384, height: 16384 });
    expectAppError(() => assertWithinPixelLimit(canvas, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(readDimensions('webp', riff(vp8x(1 << 24, 200, 0x02), chunk('ANIM', [0, 0, 0, 0, 0, 0])))).toEqual({ width: 1 << 24, height: 200 });
    expect(readDimensions('webp', riff(vp8l(16384, 16384)))).toEqual({ width: 16384, height: 16384 });
    expect(readDimensions('webp', riff(vp8(16383, 16383)))).toEqual({ width: 16383, height: 16383 });
  });

  it('ignores the VP8 scale bits and takes 14-bit sizes', () => {
    expect(readDimensions('webp', riff(vp8(0xc000 | 100, 0x4000 | 50)))).toEqual({ width: 100, height: 50 });
  });

  it('rejects damaged headers', () => {
    const rejected = [
      riff(vp8x(1 << 24, 1 << 24)), // canvas area over 2^32 - 1
      riff(vp8(0, 10)),
      riff(vp8(10, 10, 0x11)), // inter frame
      riff(chunk('VP8 ', [0x10, 0, 0, 0x9d, 0x01, 0x2b, 10, 0, 10, 0])), // start code
      riff(vp8l(5, 5, 1)), // VP8L version
      riff(chunk('VP8L', [0x2e, 0, 0, 0, 0])),
      riff(chunk('ALPH', [0, 0]), vp8(5, 5)),
      riff(vp8x(64, 64), vp8l(65, 64)), // still: bitstream larger than the canvas
      riff(vp8x(64, 64), chunk('ALPH', [0]), vp8(64, 6400)),
      riff(vp8x(64, 64)), // still without a bitstream
      riff(vp8x(64, 64, 0x02), chunk('ANIM', [0, 0, 0, 0, 0, 0]), chunk('ANMF', [1, 0, 0, 0, 0, 0, ...le24(63), ...le24(63), 0, 0, 0, 0])), // frame at x=2 overhangs
      riff(chunk('VP8X', [0, 0, 0, 0, 1, 0, 0, 1, 0])), // short VP8X
      riff(),
      new Uint8Array([0x52, 0x49, 0x46, 0x46, 2, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]),
      new TextEncoder().encode('RIFF\x10\x00\x00\x00WAVEfmt \x04\x00\x00\x00\x00\x00\x00\x00'),
    ];
    for (const input of rejected) expectAppError(() => readDimensions('webp', input), 'UNSUPPORTED_FORMAT');
  });

  it('walks chunks with pad bytes and stops at damage', () => {
    const file = riff(vp8x(3, 3), chunk('ALPH', [1, 2, 3]), vp8l(3, 3), chunk('EXIF', [9]));
    expect([...webpChunks(file)].map((c) => [c.type, c.length])).toEqual([['VP8X', 10], ['ALPH', 3], ['VP8L', 8], ['EXIF', 1]]);
    const noFinalPad = file.slice(0, file.length - 1); // EXIF is odd-sized; RIFF size without its pad
    noFinalPad[4] -= 1;
    expect([...webpChunks(noFinalPad)].map((c) => c.type)).toEqual(['VP8X', 'ALPH', 'VP8L', 'EXIF']);
    expectAppError(() => [...webpChunks(file.slice(0, file.length - 1))], 'UNSUPPORTED_FORMAT'); // file shorter than RIFF
    const lying = file.slice();
    lying[12 + 18 + 4] = 0xff; // ALPH length 255, past the RIFF end
    expectAppError(() => [...webpChunks(lying)], 'UNSUPPORTED_FORMAT');
  });

  it('only ever returns a size or throws UNSUPPORTED_FORMAT (random and mutated input)', async () => {
    const lossy = await corpus('webp/lossy_alpha4.webp');
    const lossless = await corpus('webp/lossless_vec_1_0.webp');
    const header = new TextEncoder().encode('RIFF\x40\x00\x00\x00WEBP');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 48 }).map((tail) => new Uint8Array([...header, ...tail])),
          mutated(lossy, 40),
          mutated(lossless, 40),
        ),
        (input) => {
          const dims = resultOrAppError(() => readDimensions('webp', input));
          if (dims) expect(dims.width > 0 && dims.height > 0).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
