import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertWithinPixelLimit } from '../../limits';
import { corpus, expectAppError, mutated, PNGSUITE, pngSuiteSize, prefixLengths, resultOrAppError } from '../../../../test/support/image-testing';
import { pngChunk, readPngHeader, verifyPngChunks } from './header';
import { readDimensions } from '../../../../test/support/formats';

const chunk = pngChunk;

/** Signature + IHDR (+ IEND) for the given header fields. */
function pngHeader(width: number, height: number, depth = 8, colourType = 6): Uint8Array {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([depth, colourType, 0, 0, 0], 8);
  return new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...chunk('IHDR', ihdr), ...chunk('IEND')]);
}

const valid = PNGSUITE.filter((path) => !path.includes('/x'));
const corrupt = PNGSUITE.filter((path) => path.includes('/x'));

describe('readDimensions png', () => {
  it('reads the size of every valid PngSuite file', async () => {
    expect(valid.length).toBeGreaterThan(150);
    for (const path of valid) expect(readDimensions('png', await corpus(path)), path).toEqual(pngSuiteSize(path));
  });

  it('gives UNSUPPORTED_FORMAT or the right size for every corrupt x* file', async () => {
    const rejected: string[] = [];
    for (const path of corrupt) {
      const bytes = await corpus(path);
      const dims = resultOrAppError(() => readDimensions('png', bytes));
      if (dims) expect(dims, path).toEqual({ width: 32, height: 32 });
      else rejected.push(path.split('/').pop()!);
    }
    // bad signatures, bad colour type / bit depth, and the IHDR CRC error are header damage;
    // xcsn (IDAT CRC) and xdtn (no IDAT) are only found by the decoder.
    expect(rejected.sort()).toEqual(
      ['xc1n0g08', 'xc9n2c08', 'xcrn0g04', 'xd0n2c08', 'xd3n2c08', 'xd9n2c08', 'xhdn0g08', 'xlfn0g04',
        'xs1n0g01', 'xs2n0g01', 'xs4n0g01', 'xs7n0g01'].map((n) => `${n}.png`),
    );
  });

  it('gives the full size or UNSUPPORTED_FORMAT for every prefix of every file', async () => {
    for (const path of PNGSUITE) {
      const bytes = await corpus(path);
      const full = resultOrAppError(() => readDimensions('png', bytes));
      for (const n of prefixLengths(bytes.length, 64, 8)) {
        const dims = resultOrAppError(() => readDimensions('png', bytes.subarray(0, n)));
        if (dims) expect(dims, `${path} prefix ${n}`).toEqual(full);
        if (n < 33) expect(dims, `${path} prefix ${n}`).toBeUndefined();
      }
    }
  });

  it('reads a pixel-bomb IHDR exactly, so the limit check rejects it', () => {
    const dims = readDimensions('png', pngHeader(100000, 100000));
    expect(dims).toEqual({ width: 100000, height: 100000 });
    const error = expectAppError(() => assertWithinPixelLimit(dims, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(error.message).toContain('100000x100000');
    expect(readDimensions('png', pngHeader(0x7fffffff, 1))).toEqual({ width: 0x7fffffff, height: 1 });
  });

  it('rejects zero or over-2^31 sizes, bad fields and IHDR not first', () => {
    expectAppError(() => readDimensions('png', pngHeader(0, 10)), 'UNSUPPORTED_FORMAT');
    expectAppError(() => readDimensions('png', pngHeader(10, 0)), 'UNSUPPORTED_FORMAT');
    expectAppError(() => readDimensions('png', pngHeader(0x80000000, 10)), 'UNSUPPORTED_FORMAT');
    expectAppError(() => readDimensions('png', pngHeader(10, 10, 16, 3)), 'UNSUPPORTED_FORMAT');
    expectAppError(() => readDimensions('png', pngHeader(10, 10, 4, 2)), 'UNSUPPORTED_FORMAT');
    const header = pngHeader(1, 1);
    const gamaFirst = new Uint8Array([...header.subarray(0, 8), ...chunk('gAMA', new Uint8Array(4)), ...header.subarray(8)]);
    expectAppError(() => readDimensions('png', gamaFirst), 'UNSUPPORTED_FORMAT');
    const error = expectAppError(() => readDimensions('png', new Uint8Array(5)), 'UNSUPPORTED_FORMAT');
    expect(error.message).toMatch(/damaged or is not a supported image/);
    expect(error.message).not.toMatch(/png:|offset|IHDR/);
  });

  it('refuses APNG frames outside IHDR and a first frame that is not the default image', async () => {
    const bytes = await corpus('png/pngsuite/basn2c08.png'); // 32x32
    const fcTL = (width: number, height: number, x = 0, y = 0) => {
      const data = new Uint8Array(26);
      const view = new DataView(data.buffer);
      [width, height, x, y].forEach((value, i) => view.setUint32(4 + 4 * i, value));
      return chunk('fcTL', data);
    };
    const withFrames = (...frames: Uint8Array[]) =>
      new Uint8Array([...bytes.subarray(0, 33), ...chunk('acTL', [0, 0, 0, 1, 0, 0, 0, 0]), ...frames.flatMap((f) => [...f]), ...bytes.subarray(33)]);
    const verify = (input: Uint8Array) => verifyPngChunks(input, readPngHeader(input));
    expect(() => verify(withFrames(fcTL(32, 32)))).not.toThrow();
    for (const input of [withFrames(fcTL(33, 32)), withFrames(fcTL(16, 16)), withFrames(fcTL(32, 32, 1, 0)), withFrames(fcTL(0, 32))]) {
      expectAppError(() => verify(input), 'UNSUPPORTED_FORMAT');
    }
  });

  it('only ever returns a size or throws UNSUPPORTED_FORMAT (random and mutated input)', async () => {
    const bytes = await corpus('png/pngsuite/basn2c08.png');
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), mutated(bytes, 40)), (input) => {
        const dims = resultOrAppError(() => readDimensions('png', input));
        if (dims) expect(dims.width > 0 && dims.height > 0).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

