import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orientationOnlyExif } from '../../exif';
import { pngChunk, pngChunks } from './header';
import { corpus, decodePng, expectAppError, mutated, PNGSUITE, prefixLengths, resultOrAppError, sameBytes } from '../../../../test/support/image-testing';
import { readOrientation, stripped } from '../../../../test/support/formats';

const METADATA = ['tEXt', 'zTXt', 'iTXt', 'tIME', 'eXIf', 'iCCP'];
const types = (bytes: Uint8Array) => [...pngChunks(bytes)].map((c) => c.type);

const chunk = pngChunk;

/** Inserts `extra` chunks after IHDR of a real PNG. */
function withChunks(png: Uint8Array, ...extra: Uint8Array[]): Uint8Array {
  const afterIhdr = 8 + 25;
  return new Uint8Array([...png.subarray(0, afterIhdr), ...extra.flatMap((c) => [...c]), ...png.subarray(afterIhdr)]);
}

const valid = PNGSUITE.filter((p) => !p.includes('/x'));

describe('stripPng', () => {
  it('removes text, time, EXIF and ICC chunks and copies every other chunk byte for byte', async () => {
    for (const path of valid) {
      const input = await corpus(path);
      const output = stripped('png', input);
      const kept = [...pngChunks(input)].filter((c) => !METADATA.includes(c.type));
      const expected = new Uint8Array([...input.subarray(0, 8), ...kept.flatMap((c) => [...input.subarray(c.start, c.end)])]);
      expect(sameBytes(output, expected), path).toBe(true);
      expect(types(output).filter((t) => METADATA.includes(t)), path).toEqual([]);
    }
  });

  it('actually had something to remove in the ct*, cm* and exif files', async () => {
    for (const name of ['ct1n0g04', 'ctzn0g04', 'cten0g04', 'ctfn0g04', 'ctgn0g04', 'cthn0g04', 'ctjn0g04', 'cm0n0g04', 'cm7n0g04', 'cm9n0g04', 'exif2c08']) {
      const input = await corpus(`png/pngsuite/${name}.png`);
      expect(types(input).some((t) => METADATA.includes(t)), name).toBe(true);
      expect(stripped('png', input).length, name).toBeLessThan(input.length);
    }
  });

  it('decodes every stripped PngSuite file to exactly the same pixels', async () => {
    for (const path of valid) {
      const input = await corpus(path);
      const before = await decodePng(input);
      const after = await decodePng(stripped('png', input));
      expect([after.width, after.height], path).toEqual([before.width, before.height]);
      expect(sameBytes(after.data, before.data), `${path}: pixels differ`).toBe(true);
    }
  });

  it('drops iCCP and unknown ancillary chunks, keeps colour chunks, unknown critical chunks and nothing after IEND', async () => {
    const base = await corpus('png/pngsuite/basn2c08.png');
    const srgb = chunk('sRGB', [0]);
    const input = new Uint8Array([
      ...withChunks(base, chunk('iCCP', [0x61, 0, 0, 1, 2, 3]), srgb, chunk('prVt', [1, 2]), chunk('caBX', [9])),
      ...[1, 2, 3, 4],
    ]);
    const output = stripped('png', input);
    expect(types(output)).toEqual(['IHDR', 'sRGB', 'gAMA', 'IDAT', 'IEND']);
    expect(sameBytes(output, withChunks(base, srgb))).toBe(true);
    const critical = withChunks(base, chunk('CRIT', [1]));
    expect(types(stripped('png', critical))).toEqual(['IHDR', 'CRIT', 'gAMA', 'IDAT', 'IEND']);
  });

  it('keeps a non-1 orientation as a minimal eXIf chunk after IHDR', async () => {
    const input = (await corpus('png/pngsuite/exif2c08.png')).slice();
    const exif = [...pngChunks(input)].find((c) => c.type === 'eXIf')!;
    input[exif.data + 19] = 6; // Orientation value (the chunk CRC is now wrong, which strip does not check)
    expect(readOrientation('png', input)).toBe(6);
    const output = stripped('png', input);
    expect(types(output)).toEqual(['IHDR', 'eXIf', 'IDAT', 'IEND']);
    const written = [...pngChunks(output)][1];
    expect(sameBytes(output.subarray(written.start, written.end), chunk('eXIf', orientationOnlyExif(6)))).toBe(true);
    expect(readOrientation('png', output)).toBe(6);
    const before = await decodePng(input);
    expect(sameBytes((await decodePng(output)).data, before.data)).toBe(true);
  });

  it('gives a result or UNSUPPORTED_FORMAT for every corrupt x* file', async () => {
    let strippedCount = 0;
    for (const path of PNGSUITE.filter((p) => p.includes('/x'))) {
      const input = await corpus(path);
      if (resultOrAppError(() => stripped('png', input))) strippedCount++;
    }
    expect(strippedCount).toBe(2); // xcsn0g01 (bad IDAT CRC) and xdtn0g01 (no IDAT): for the decoder to reject
  });

  it('rejects truncated files (no IEND) with UNSUPPORTED_FORMAT', async () => {
    for (const path of ['png/pngsuite/ct1n0g04.png', 'png/pngsuite/basi6a16.png']) {
      const input = await corpus(path);
      for (const n of prefixLengths(input.length, 64, 32)) {
        expectAppError(() => stripped('png', input.subarray(0, n)), 'UNSUPPORTED_FORMAT');
      }
    }
  });

  it('only ever returns bytes or throws UNSUPPORTED_FORMAT (mutated input)', async () => {
    const input = await corpus('png/pngsuite/ctzn0g04.png');
    fc.assert(
      fc.property(mutated(input, input.length), (bytes) => {
        const output = resultOrAppError(() => stripped('png', bytes));
        if (output) expect(types(output)[0]).toBe('IHDR');
      }),
      { numRuns: 300 },
    );
  });
});
