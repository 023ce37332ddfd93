import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orientationOnlyExif } from '../../exif';
import { webpChunks } from './riff';
import { corpus, decodeWebp, expectAppError, mutated, prefixLengths, resultOrAppError, sameBytes, WEBPS } from '../../../../test/support/image-testing';
import { readOrientation, stripped, readDimensions } from '../../../../test/support/formats';

const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const le32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >>> 24];
const le24 = (v: number) => le32(v).slice(0, 3);

function chunk(type: string, data: ArrayLike<number>): number[] {
  return [...text(type), ...le32(data.length), ...Array.from(data), ...(data.length & 1 ? [0] : [])];
}
function riff(...chunks: number[][]): Uint8Array {
  const body = chunks.flat();
  return new Uint8Array([...text('RIFF'), ...le32(body.length + 4), ...text('WEBP'), ...body]);
}
const vp8x = (flags: number, width: number, height: number) => chunk('VP8X', [flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);

/** The chunks of a corpus file, by type, as payload copies. */
async function payloads(path: string): Promise<Record<string, Uint8Array>> {
  const bytes = await corpus(path);
  return Object.fromEntries([...webpChunks(bytes)].map((c) => [c.type, bytes.slice(c.data, c.data + c.length)]));
}

/** A TIFF block (little-endian) with Make and Orientation entries. */
function exifTiff(orientation: number): number[] {
  return [0x49, 0x49, 42, 0, 8, 0, 0, 0, 2, 0, 0x0f, 0x01, 2, 0, 4, 0, 0, 0, 0x41, 0x42, 0x43, 0,
    0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0, 0x99];
}

const ICC_EXIF_XMP = 0x20 | 0x08 | 0x04;
const iccp = chunk('ICCP', text('fake icc profile')); // odd-free, 16 bytes
const xmp = chunk('XMP ', text('<x:xmpmeta xmlns:x="adobe:ns:meta/"/>')); // 37 bytes: padded

/** lossy_alpha4.webp (VP8X + ALPH + VP8, 100x100) with ICC, EXIF, XMP and an unknown chunk added. */
async function lossyWithMetadata(orientation = 1): Promise<Uint8Array> {
  const { ALPH, 'VP8 ': vp8 } = await payloads('webp/lossy_alpha4.webp');
  return riff(vp8x(0x10 | ICC_EXIF_XMP, 100, 100), iccp, chunk('ALPH', ALPH), chunk('VP8 ', vp8), chunk('EXIF', exifTiff(orientation)), xmp, chunk('ABCD', [1, 2, 3]));
}

/** lossless1.webp (simple VP8L, odd-sized, 1000x307) rewrapped as VP8X with metadata. */
async function losslessWithMetadata(): Promise<Uint8Array> {
  const { VP8L } = await payloads('webp/lossless1.webp');
  expect(VP8L.length % 2).toBe(1);
  return riff(vp8x(ICC_EXIF_XMP, 1000, 307), iccp, chunk('VP8L', VP8L), chunk('EXIF', exifTiff(1)), xmp);
}

/** Structural checks every stripped file must pass. */
function expectValidStripped(output: Uint8Array, label: string): void {
  expect(output[4] | (output[5] << 8) | (output[6] << 16) | (output[7] << 24), `${label}: RIFF size`).toBe(output.length - 8);
  const types = [...webpChunks(output)].map((c) => c.type);
  expect(types.filter((t) => !['VP8X', 'VP8 ', 'VP8L', 'ALPH', 'ANIM', 'ANMF', 'EXIF'].includes(t)), label).toEqual([]);
  const last = [...webpChunks(output)].at(-1)!;
  expect(last.end, `${label}: chunks fill the RIFF exactly`).toBe(output.length);
}

describe('stripWebp', () => {
  it('removes ICCP, EXIF, XMP and unknown chunks from a VP8X file, clears the flags and decodes identically', async () => {
    for (const make of [lossyWithMetadata, losslessWithMetadata]) {
      const input = await make();
      const output = stripped('webp', input);
      expectValidStripped(output, make.name);
      const chunks = [...webpChunks(output)];
      expect(chunks.map((c) => c.type), make.name).toEqual(make === lossyWithMetadata ? ['VP8X', 'ALPH', 'VP8 '] : ['VP8X', 'VP8L']);
      expect(output[20] & ICC_EXIF_XMP, make.name).toBe(0);
      expect(output[20] & 0x10, `${make.name}: alpha flag kept`).toBe(input[20] & 0x10);
      for (const c of chunks.slice(1)) {
        const original = [...webpChunks(input)].find((o) => o.type === c.type)!;
        expect(sameBytes(output.subarray(c.data, c.data + c.length), input.subarray(original.data, original.data + original.length)), c.type).toBe(true);
      }
      const before = await decodeWebp(input);
      const after = await decodeWebp(output);
      expect([after.width, after.height]).toEqual([before.width, before.height]);
      expect(sameBytes(after.data, before.data), `${make.name}: pixels differ`).toBe(true);
    }
  });

  it('keeps a non-1 orientation as a minimal EXIF chunk with the EXIF flag', async () => {
    const input = await lossyWithMetadata(6);
    expect(readOrientation('webp', input)).toBe(6);
    const output = stripped('webp', input);
    expectValidStripped(output, 'rotated');
    const chunks = [...webpChunks(output)];
    expect(chunks.map((c) => c.type)).toEqual(['VP8X', 'ALPH', 'VP8 ', 'EXIF']);
    const exif = chunks[3];
    expect(sameBytes(output.subarray(exif.data, exif.data + exif.length), orientationOnlyExif(6))).toBe(true);
    expect(output[20] & ICC_EXIF_XMP).toBe(0x08);
    expect(readOrientation('webp', output)).toBe(6);
    expect(sameBytes((await decodeWebp(output)).data, (await decodeWebp(input)).data)).toBe(true);
  });

  it('strips every corpus WebP (dropping RIFF INFO chunks such as ICMT/IART) without changing its pixels', async () => {
    for (const path of Object.keys(WEBPS)) {
      const input = await corpus(path);
      const output = stripped('webp', input);
      expectValidStripped(output, path);
      expect(readDimensions('webp', output), path).toEqual(readDimensions('webp', input));
      if (path.startsWith('photos/')) continue; // 12 MP: structure only, to keep the suite quick
      const before = await decodeWebp(input).catch(() => null);
      const after = await decodeWebp(output).catch(() => null);
      if (!before) {
        expect(after, `${path} decodes only after stripping`).toBeNull();
        continue;
      }
      expect(sameBytes(after!.data, before.data), `${path}: pixels differ`).toBe(true);
    }
    const info = stripped('webp', await corpus('webp/test.webp'));
    expect([...webpChunks(info)].map((c) => c.type)).toEqual(['VP8 ']);
  });

  it('rejects files without an image chunk or with chunks past the end', async () => {
    expectAppError(() => stripped('webp', riff(vp8x(0, 10, 10), chunk('EXIF', exifTiff(1)))), 'UNSUPPORTED_FORMAT');
    const input = await lossyWithMetadata();
    for (const n of prefixLengths(input.length, 64, 64)) {
      const output = resultOrAppError(() => stripped('webp', input.subarray(0, n)));
      expect(output, `prefix ${n}`).toBeUndefined(); // the RIFF size always tells a prefix is short
    }
    const trailing = new Uint8Array([...input, 1, 2, 3, 4]); // bytes after the RIFF are dropped
    expect(sameBytes(stripped('webp', trailing), stripped('webp', input))).toBe(true);
  });

  it('only ever returns bytes or throws UNSUPPORTED_FORMAT (mutated input)', async () => {
    const input = await lossyWithMetadata(3);
    const fuzzRegion = 20 + 10 + 24; // VP8X, ICCP and the first chunk headers
    fc.assert(
      fc.property(mutated(input, fuzzRegion), (bytes) => {
        const output = resultOrAppError(() => stripped('webp', bytes));
        if (output) expectValidStripped(output, 'mutated');
      }),
      { numRuns: 300 },
    );
  });
});
