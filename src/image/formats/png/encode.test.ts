import { describe, expect, it } from 'vitest';
import { corpus, decodeJpeg, sameBytes } from '../../../../test/support/image-testing';
import { decodePng } from '../../../../test/support/png-testing';
import { referenceDecode } from '../../../../test/workers/images';
import { pngChunks, readPngHeader, verifyPngChunks } from './header';

import type { RgbaImage } from '../../types';
import { DEFAULT_PNG_ENCODE, encodePng, IDAT_BYTES, pngEncoder, pngFileBound, type FilterStrategy } from './encode';
import { frameSource } from '../../../../test/support/row-sources';
import { encodeToBytes } from '../../result-buffer';

/** Pixels of each kind the encoder tells apart: `grey` has R = G = B, `opaque` has alpha 255. */
function pixels(width: number, height: number, kind: { grey: boolean; alpha: boolean }, seed = 1): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let h = seed;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + x * 7 + y * 13) | 0;
      const noise = (h >>> 24) & 31;
      const r = (x * 3 + noise) & 255;
      const [g, b] = kind.grey ? [r, r] : [(y * 5 + noise) & 255, (x ^ y) & 255];
      data.set([r, g, b, kind.alpha ? (x * y + noise) & 255 : 255], (y * width + x) * 4);
    }
  }
  return { data, width, height };
}

const KINDS = [
  { grey: false, alpha: false, colourType: 2 },
  { grey: true, alpha: false, colourType: 0 },
  { grey: true, alpha: true, colourType: 4 },
  { grey: false, alpha: true, colourType: 6 },
];

const colourTypeOf = (png: Uint8Array) => png[8 + 8 + 9];

describe('PNG encoder', () => {
  for (const { grey, alpha, colourType } of KINDS) {
    it(`writes colour type ${colourType} for ${grey ? 'grey' : 'colour'} ${alpha ? 'with alpha' : 'opaque'} bands, and the pixels come back exactly`, async () => {
      for (const [width, height] of [[1, 1], [97, 61], [1000, 3]]) {
        const image = pixels(width, height, { grey, alpha });
        const png = await encodeToBytes(pngEncoder, frameSource(image, { alpha, grey }), { quality: 80, orientation: 1 });
        expect(colourTypeOf(png)).toBe(colourType);
        expect(png[8 + 8 + 8]).toBe(8); // bit depth
        const ours = await decodePng(png);
        expect(sameBytes(ours.data, image.data), `${width}x${height}, our decoder`).toBe(true);
        const reference = await referenceDecode(png);
        expect(sameBytes(reference.data, image.data), `${width}x${height}, reference decoder`).toBe(true);
      }
    });
  }

  it('writes the same file whatever the band height', async () => {
    const image = pixels(301, 203, { grey: false, alpha: true });
    const files = [];
    for (const bandRows of [1, 5, 16, 64, 203]) files.push(await encodePng(frameSource(image, { alpha: true }, undefined, bandRows)));
    for (const file of files.slice(1)) expect(sameBytes(file, files[0])).toBe(true);
  });

  it('round-trips with every filter strategy', async () => {
    const image = pixels(120, 80, { grey: false, alpha: false });
    for (const filter of ['adaptive', 'cheap-adaptive', 'none', 'sub', 'up', 'average', 'paeth'] satisfies FilterStrategy[]) {
      const png = await encodePng(frameSource(image, { alpha: false }), { ...DEFAULT_PNG_ENCODE, filter });
      const rgb = (await decodePng(png)).data;
      expect(sameBytes(rgb, image.data), filter).toBe(true);
    }
  });

  it('writes only IHDR, IDAT chunks of at most 64 KiB and IEND, with valid CRCs', async () => {
    const photo = await decodeJpeg(await corpus('photos/photo-1mp.jpg'));
    const png = await encodePng(frameSource(photo, { alpha: false }));
    verifyPngChunks(png, readPngHeader(png));
    const chunks = [...pngChunks(png)];
    expect(chunks[0].type).toBe('IHDR');
    expect(chunks.at(-1)!.type).toBe('IEND');
    const idats = chunks.slice(1, -1);
    expect(idats.length).toBeGreaterThan(3);
    for (const chunk of idats) {
      expect(chunk.type).toBe('IDAT');
      expect(chunk.length).toBeLessThanOrEqual(IDAT_BYTES);
    }
    expect(sameBytes((await decodePng(png)).data, photo.data)).toBe(true);
  });

  it('stays within its size bound for incompressible pixels', async () => {
    const noise = new Uint8Array(640 * 480 * 4);
    crypto.getRandomValues(noise.subarray(0, 65536));
    for (let at = 65536; at < noise.length; at += 65536) crypto.getRandomValues(noise.subarray(at, Math.min(noise.length, at + 65536)));
    const png = await encodePng(frameSource({ data: noise, width: 640, height: 480 }, { alpha: true }));
    expect(png.length).toBeGreaterThan(640 * 480 * 4);
    expect(png.length).toBeLessThanOrEqual(pngFileBound(640, 480, 4));
    expect(sameBytes((await decodePng(png)).data, noise)).toBe(true);
  });

  it('joins its deflate pieces into one zlib stream that both decoders read, however the rows fill the pieces', async () => {
    // 1365 RGB pixels and a filter byte are 4,096 bytes a row: 128 rows fill two pieces exactly,
    // so the stream ends with an empty last piece; 1000x700 spans several pieces mid-row, and a
    // row of 100,000 pixels is longer than a piece.
    for (const [width, height] of [[1365, 128], [1365, 129], [1000, 700], [100_000, 2]]) {
      const image = pixels(width, height, { grey: false, alpha: false });
      const png = await encodePng(frameSource(image, { alpha: false }));
      expect(png.length).toBeLessThanOrEqual(pngFileBound(width, height, 3));
      expect(sameBytes((await decodePng(png)).data, image.data), `${width}x${height}, our decoder`).toBe(true);
      expect(sameBytes((await referenceDecode(png)).data, image.data), `${width}x${height}, reference decoder`).toBe(true);
    }
  });

  it('compresses flat pieces harder, and they still come back exactly', async () => {
    // Panels of flat colour with strokes of text: after a first piece that compresses to under a
    // quarter, the pieces go through the level-6 compressor.
    const width = 1600;
    const height = 900;
    const data = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const stroke = y % 24 > 6 && y % 24 < 16 && x % 9 < 5 && ((x >> 6) + (y >> 5)) % 3 !== 0;
        const panel = x < 300 ? [232, 234, 238] : [250, 250, 252];
        data.set(stroke ? [40, 40, 48, 255] : [...panel, 255], (y * width + x) * 4);
      }
    }
    const image = { data, width, height };
    const png = await encodePng(frameSource(image, { alpha: false }));
    const levelOne = await encodePng(frameSource(image, { alpha: false }), { ...DEFAULT_PNG_ENCODE, graphicLevel: 0 });
    expect(png.length).toBeLessThan(levelOne.length * 0.95);
    expect(sameBytes((await decodePng(png)).data, image.data)).toBe(true);
    expect(sameBytes((await referenceDecode(png)).data, image.data)).toBe(true);
    // A photo's pieces compress to about half: none takes the harder level.
    const photo = await decodeJpeg(await corpus('photos/photo-1mp.jpg'));
    const photoPng = await encodePng(frameSource(photo, { alpha: false }));
    expect(sameBytes(photoPng, await encodePng(frameSource(photo, { alpha: false }), { ...DEFAULT_PNG_ENCODE, graphicLevel: 0 }))).toBe(true);
  });

  it('refuses a source that ends early, and closes it', async () => {
    const image = pixels(10, 10, { grey: false, alpha: false });
    const full = frameSource(image, { alpha: false });
    let closed = false;
    const short = { ...full, height: 11, close: () => { closed = true; full.close(); } };
    await expect(encodePng(short)).rejects.toThrow(/10 of 11 rows/);
    expect(closed).toBe(true);
  });
});
