import { describe, expect, it } from 'vitest';
import { sameBytes } from '../../../../test/support/image-testing';
import {
  expectedRgba, hashedSamples, headerChunks, idatChunks, pngFromZlib, scanlines, zlibDeflate, zlibWithZeros, type PngSpec,
} from '../../../../test/support/png-builder';
import { concat } from '../../bytes';
import { pngChunk, readPngHeader } from './header';
import { openPng } from './decode';
import { damage, decodePng } from '../../../../test/support/png-testing';

const SPEC: PngSpec = { width: 64, height: 64, colourType: 6, bitDepth: 8, interlaced: false, sample: hashedSamples(8) };
const u32 = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];

describe('PNG decoder: damaged and hostile image data', () => {
  it('decodes a 64x64 PNG whose IDAT inflates 10 GB of zeros past the image quickly, without inflating them', async () => {
    const bomb = pngFromZlib({ ...SPEC, idatBytes: 1 << 24 }, zlibWithZeros(scanlines(SPEC), 10e9));
    expect(bomb.length).toBeGreaterThan(60e6);
    const started = performance.now();
    const source = await openPng(bomb, readPngHeader(bomb), { shrink: 1, region: null });
    const data = new Uint8Array(64 * 64 * 4);
    for (let band = await source.read(); band; band = await source.read()) data.set(band.data, band.y * 64 * 4);
    const ms = performance.now() - started;
    // Only the image's bytes are inflated (10 GB would take ~10 s).
    expect(sameBytes(data, expectedRgba(SPEC))).toBe(true);
    expect(ms).toBeLessThan(3000);
  });

  for (const interlaced of [false, true]) {
    const spec = { ...SPEC, interlaced };
    const label = interlaced ? ' (Adam7)' : '';

    it(`refuses a truncated zlib stream as damaged${label}`, async () => {
      const zlib = await zlibDeflate(scanlines(spec));
      for (const keep of [0.1, 0.5, 0.9]) await damage(() => decodePng(pngFromZlib(spec, zlib.subarray(0, Math.floor(zlib.length * keep)))));
    });

    it(`refuses a complete zlib stream that lacks the last rows as damaged${label}`, async () => {
      const rows = scanlines(spec);
      for (const missing of [1, 65, rows.length - 1]) await damage(() => decodePng(pngFromZlib(spec, zlibWithZeros(rows.subarray(0, rows.length - missing), 0))));
    });

    it(`refuses an unknown filter type as damaged${label}`, async () => {
      await damage(async () => decodePng(pngFromZlib(spec, await zlibDeflate(scanlines({ ...spec, filter: (n) => (n === 9 ? 5 : n % 5) })))));
    });

    it(`refuses corrupt zlib data as damaged${label}`, async () => {
      const zlib = await zlibDeflate(scanlines(spec));
      const badHeader = zlib.slice();
      badHeader[1] ^= 1; // FCHECK no longer makes the header a multiple of 31
      const badBlockType = zlib.slice();
      badBlockType[2] = 0x07; // BTYPE 11 is reserved
      for (const zlibData of [badHeader, badBlockType]) await damage(() => decodePng(pngFromZlib(spec, zlibData)));
    });

    it(`ignores bytes after the end of the zlib stream inside the IDAT${label}`, async () => {
      // libpng ignores them too; the stream's end may fall anywhere in an IDAT, or in the 7-byte ones.
      const zlib = await zlibDeflate(scanlines(spec));
      const image = await decodePng(pngFromZlib(spec, concat([zlib, new Uint8Array([1, 2, 3, 4, 5])])));
      expect(sameBytes(image.data, expectedRgba(spec))).toBe(true);
      const split = await decodePng(pngFromZlib({ ...spec, idatBytes: 7 }, concat([zlib, new Uint8Array(40).fill(9)])));
      expect(sameBytes(split.data, expectedRgba(spec))).toBe(true);
    });
  }

  it('decodes an APNG\'s default image, whether or not it is the first frame, and never its fdAT frames', async () => {
    const zlib = await zlibDeflate(scanlines(SPEC));
    const [signature, ihdr] = headerChunks(SPEC);
    const fcTL = (sequence: number, width: number, height: number) => pngChunk('fcTL', [...u32(sequence), ...u32(width), ...u32(height), ...u32(0), ...u32(0), 0, 1, 0, 10, 0, 0]);
    const otherFrame = await zlibDeflate(new Uint8Array(65 * 32 * 4 + 32).fill(200));
    const fdAT = pngChunk('fdAT', [...u32(2), ...otherFrame]);
    const firstFrame = concat([signature, ihdr, pngChunk('acTL', [...u32(2), ...u32(0)]), fcTL(0, 64, 64), ...idatChunks(zlib), fcTL(1, 32, 32), fdAT, pngChunk('IEND')]);
    const notAFrame = concat([signature, ihdr, pngChunk('acTL', [...u32(1), ...u32(0)]), ...idatChunks(zlib), fcTL(0, 32, 32), fdAT, pngChunk('IEND')]);
    for (const file of [firstFrame, notAFrame]) expect(sameBytes((await decodePng(file)).data, expectedRgba(SPEC))).toBe(true);
  });

  it('leaves no unhandled rejection behind when a source is closed early or fails', async () => {
    const rejections: unknown[] = [];
    const listener = (event: PromiseRejectionEvent) => rejections.push(event.reason);
    addEventListener('unhandledrejection', listener);
    try {
      const spec = { ...SPEC, width: 300, height: 300 };
      const zlib = await zlibDeflate(scanlines(spec));
      for (const interlaced of [false, true]) {
        const input = pngFromZlib({ ...spec, interlaced }, interlaced ? await zlibDeflate(scanlines({ ...spec, interlaced })) : zlib);
        const early = await openPng(input, readPngHeader(input), { shrink: 1, region: null });
        await early.read();
        early.close();
        const top = await decodePng(input, { x: 0, y: 0, width: 300, height: 20 });
        expect(top.height).toBe(20);
      }
      await damage(() => decodePng(pngFromZlib(spec, zlib.subarray(0, 5000))));
      // Smooth pixels make Huffman-coded blocks, where a run of set bits is an invalid code.
      const smooth = { ...spec, sample: (x: number, y: number, c: number) => (x + y * c) & 255 };
      const corrupt = await zlibDeflate(scanlines(smooth));
      corrupt.fill(0xff, corrupt.length >> 1, (corrupt.length >> 1) + 100);
      await damage(() => decodePng(pngFromZlib(smooth, corrupt)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      removeEventListener('unhandledrejection', listener);
    }
    expect(rejections).toEqual([]);
  });
});
