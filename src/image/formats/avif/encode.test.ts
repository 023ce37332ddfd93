import { beforeAll, describe, expect, it } from 'vitest';
import { readAvifStructure, readImageGrid, ispeOf, property, type AvifStructure } from '../../../../test/support/avif-structure';
import { comparePixels } from '../../../../test/support/compare-pixels';
import { corpus, decodeJpeg, sameBytes } from '../../../../test/support/image-testing';
import { ssimInsideAndOutside } from '../../../../test/support/ssim';
import { psnr, referenceDecode } from '../../../../test/workers/images';
import { AppError } from '../../../errors';
import { encodeWholeAvif } from '../../../../test/support/avif-whole-encode';
import { takeCodecMemoryBytes } from '../../codecs/wasm-memory';
import { type RowSource } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { avifEncoder, avifEncoderWith } from './encode';
import { avifEncodedBytes, avifEncoderBufferBytes, avifEncoderWasmBytes } from './memory';
import { primaryAv1 } from './encode-tile';
import { readDimensions } from '../../../../test/support/formats';
import { frameSource } from '../../../../test/support/row-sources';
import { encodeToBytes } from '../../result-buffer';

const Q80 = { quality: 80, orientation: 1 };
const MiB = 2 ** 20;

/** The `width` x `height` pixels of `image` starting at (left, top). */
function region(image: RgbaImage, left: number, top: number, width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const from = ((top + y) * image.width + left) * 4;
    data.set(image.data.subarray(from, from + width * 4), y * width * 4);
  }
  return { data, width, height };
}

const raw = (image: RgbaImage) => ({ ...image, channels: 4 });

describe('AVIF grid encoder, the 12 MP photo at q80', () => {
  let source: RgbaImage;
  let avif: Uint8Array;
  let encoderMemory: number;
  let decoded: Promise<RgbaImage> | undefined;
  const referenceDecoded = () => (decoded ??= referenceDecode(avif));

  beforeAll(async () => {
    source = await decodeJpeg(await corpus('photos/photo-12mp.jpg'));
    takeCodecMemoryBytes();
    avif = await encodeToBytes(avifEncoder, frameSource(source, { alpha: false }), Q80);
    encoderMemory = takeCodecMemoryBytes();
  }, 120_000);

  it('is a grid of 10 x 8 tiles of 400 x 376 px whose size the header parser reads', () => {
    const file = readAvifStructure(avif);
    const grid = file.items.get(file.primaryId)!;
    expect(grid.type).toBe('grid');
    expect(readImageGrid(grid.data)).toEqual({ rows: 8, columns: 10, outputWidth: 4000, outputHeight: 3000 });
    expect(ispeOf(file.items.get(2)!)).toEqual({ width: 400, height: 376 });
    expect(readDimensions('avif', avif)).toEqual({ width: 4000, height: 3000 });
  });

  it('decodes with the reference decoder to the source within 39 dB PSNR (measured 39.8)', async () => {
    const decoded = await referenceDecoded();
    expect([decoded.width, decoded.height]).toEqual([4000, 3000]);
    expect(psnr(decoded, source)).toBeGreaterThan(39);
  });

  it('shows no seams: SSIM beside tile edges is no worse than elsewhere (measured 0.971 against 0.964)', async () => {
    const decoded = await referenceDecoded();
    // The two pixels either side of every inner tile edge.
    const besideEdge = (position: number, tile: number) => position >= 2 && (position + 2) % tile < 4;
    const { inside, outside } = ssimInsideAndOutside(raw(source), raw(decoded), (x, y) => besideEdge(x, 400) || besideEdge(y, 376));
    console.log(`AVIF 12 MP: SSIM beside tile edges ${inside.toFixed(4)}, elsewhere ${outside.toFixed(4)}`);
    expect(outside).toBeGreaterThan(0.96);
    expect(inside).toBeGreaterThanOrEqual(outside);
  });

  it('holds one encoder instance of 16 MiB, not the 344 MiB of a whole-image encode', () => {
    expect(encoderMemory).toBeLessThanOrEqual(16 * MiB);
  });
});

describe('AVIF grid encoder', () => {
  let photo: RgbaImage;

  beforeAll(async () => {
    photo = await decodeJpeg(await corpus('photos/photo-1mp.jpg'));
  });

  it("writes a result no larger than one tile as one av01 item holding today's AV1 data", async () => {
    const image = region(photo, 300, 200, 400, 300);
    const avif = await encodeToBytes(avifEncoder, frameSource(image, { alpha: false }), Q80);
    const today = await encodeWholeAvif(image, 80);

    const file = readAvifStructure(avif);
    const item = file.items.get(file.primaryId)!;
    expect([item.type, file.items.size, file.references]).toEqual(['av01', 1, []]);
    const expected = primaryAv1(today);
    expect(sameBytes(item.data, expected.data)).toBe(true);
    expect(property(item, 'av1C')).toEqual(expected.config);
    const todays = readAvifStructure(today).items.get(1)!;
    for (const type of ['ispe', 'pixi', 'colr']) expect(property(item, type)).toEqual(property(todays, type));
  });

  it('pads odd sizes: a 301 x 203 grid is cropped back by clap and matches the source up to its last row and column (measured 39.7, 40.0, 40.2 dB)', async () => {
    const image = region(photo, 100, 100, 301, 203);
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 128 }), frameSource(image, { alpha: false }), Q80);

    const file = readAvifStructure(avif);
    const grid = file.items.get(file.primaryId)!;
    // MIAF: a 4:2:0 grid is even-sized; clap keeps the top-left 301 x 203 (centre offset -1/2, -1/2).
    expect(readImageGrid(grid.data)).toEqual({ rows: 2, columns: 3, outputWidth: 302, outputHeight: 204 });
    expect(ispeOf(grid)).toEqual({ width: 302, height: 204 });
    const clap = new DataView(property(grid, 'clap')!.slice().buffer);
    expect([0, 4, 8, 12, 16, 20, 24, 28].map((at) => clap.getInt32(at))).toEqual([301, 1, 203, 1, -1, 2, -1, 2]);
    expect(grid.properties.find((p) => p.type === 'clap')!.essential).toBe(true);
    // The header parser applies clap, as the decoder does: the image is 301 x 203.
    expect(readDimensions('avif', avif)).toEqual({ width: 301, height: 203 });

    const decoded = await referenceDecode(avif);
    expect([decoded.width, decoded.height]).toEqual([301, 203]);
    expect(psnr(decoded, image)).toBeGreaterThan(38);
    const lastColumn = (picture: RgbaImage) => region(picture, 300, 0, 1, 203);
    const lastRow = (picture: RgbaImage) => region(picture, 0, 202, 301, 1);
    expect(psnr(lastColumn(decoded), lastColumn(image))).toBeGreaterThan(38);
    expect(psnr(lastRow(decoded), lastRow(image))).toBeGreaterThan(38);
  });

  it('pads a side under 64 px to a 64 px tile column and crops it back', async () => {
    const image = region(photo, 500, 0, 40, 700);
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 128 }), frameSource(image, { alpha: false }), Q80);
    const file = readAvifStructure(avif);
    const grid = file.items.get(file.primaryId)!;
    expect(readImageGrid(grid.data)).toEqual({ rows: 6, columns: 1, outputWidth: 64, outputHeight: 700 });
    expect(ispeOf(file.items.get(2)!)).toEqual({ width: 64, height: 120 });
    const decoded = await referenceDecode(avif);
    expect([decoded.width, decoded.height]).toEqual([40, 700]);
    expect(psnr(decoded, image)).toBeGreaterThan(38);
  });

  it('keeps alpha as a grid of alpha tiles, the opaque tiles included (measured 41.7 dB, alpha within 8)', async () => {
    const image = withAlpha(region(photo, 0, 0, 320, 200), (x, y) => (x < 112 ? 255 : x > 240 && y > 60 && y < 140 ? 0 : (x + y) % 256));
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 128 }), frameSource(image, { alpha: true }), Q80);

    const file = readAvifStructure(avif);
    const alphaId = file.references.find(([type]) => type === 'auxl')![1];
    const alphaGrid = file.items.get(alphaId)!;
    expect(alphaGrid.type).toBe('grid');
    const alphaTiles = file.references.find(([type, from]) => type === 'dimg' && from === alphaId)![2];
    expect(alphaTiles).toHaveLength(6);
    const alphaConfig = property(file.items.get(alphaTiles[0])!, 'av1C')!;
    expect(alphaConfig[2] & 0x10).toBe(0x10); // monochrome
    for (const id of alphaTiles) expect(property(file.items.get(id)!, 'av1C')).toEqual(alphaConfig);

    const decoded = await referenceDecode(avif);
    const comparison = comparePixels(decoded, image);
    expect(comparison.psnr).toBeGreaterThan(38);
    let alphaError = 0;
    for (let i = 3; i < image.data.length; i += 4) alphaError = Math.max(alphaError, Math.abs(decoded.data[i] - image.data[i]));
    expect(alphaError).toBeLessThanOrEqual(16);
  });

  it('drops alpha when a source that may have it is opaque everywhere', async () => {
    const image = region(photo, 0, 0, 320, 200);
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 128 }), frameSource(image, { alpha: true }), Q80);
    const file = readAvifStructure(avif);
    expect(file.references.map(([type]) => type)).toEqual(['dimg']);
    expect(file.items.size).toBe(1 + 6);
  });

  it('writes the same file whatever the band height', async () => {
    const image = region(photo, 0, 0, 300, 260);
    const encoder = avifEncoderWith({ maxTileSide: 128 });
    const files = [];
    for (const bandRows of [1, 7, 16, 300]) files.push(await encodeToBytes(encoder, frameSource(image, { alpha: false }, () => {}, bandRows), Q80));
    for (const file of files.slice(1)) expect(sameBytes(file, files[0])).toBe(true);
  });

  it('writes the boxes HEIF, MIAF and AVIF ask for', async () => {
    const image = withAlpha(region(photo, 0, 0, 320, 200), (x) => (x < 200 ? 255 : 100));
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 128 }), frameSource(image, { alpha: true }), Q80);
    const file: AvifStructure = readAvifStructure(avif);

    expect(file.topLevel).toEqual(['ftyp', 'meta', 'mdat']);
    expect([file.majorBrand, ...file.brands]).toEqual(['avif', 'avif', 'mif1', 'miaf', 'MA1B']);
    const grid = file.items.get(file.primaryId)!;
    const [colorTiles, alphaTiles] = file.references.filter(([type]) => type === 'dimg').map(([, , to]) => to);
    // Tiles in raster order, hidden, each an av01 item with an essential av1C shared by all of them.
    expect(colorTiles).toEqual([2, 3, 4, 5, 6, 7]);
    expect(file.references).toContainEqual(['auxl', 8, [1]]);
    expect(alphaTiles).toEqual([9, 10, 11, 12, 13, 14]);
    for (const id of [...colorTiles, ...alphaTiles]) {
      const tile = file.items.get(id)!;
      expect([tile.type, tile.hidden]).toEqual(['av01', true]);
      expect(ispeOf(tile)).toEqual({ width: 112, height: 104 });
      expect(tile.properties.find((p) => p.type === 'av1C')!.essential).toBe(true);
    }
    expect([grid.type, grid.hidden]).toEqual(['grid', false]);
    expect(grid.properties.map((p) => p.type)).toEqual(['ispe', 'pixi', 'colr']);
    expect(property(grid, 'colr')).toEqual(Uint8Array.from([...'nclx'].map((c) => c.charCodeAt(0)).concat([0, 2, 0, 2, 0, 6, 0x80])));
    expect(property(grid, 'pixi')).toEqual(Uint8Array.from([0, 0, 0, 0, 3, 8, 8, 8]));
    const alphaGrid = file.items.get(8)!;
    expect(alphaGrid.properties.map((p) => p.type)).toEqual(['ispe', 'pixi', 'auxC']);
    expect(new TextDecoder().decode(property(alphaGrid, 'auxC')!.subarray(4))).toBe('urn:mpeg:mpegB:cicp:systems:auxiliary:alpha\0');
    expect(readImageGrid(alphaGrid.data)).toEqual(readImageGrid(grid.data));
    // The header check also finds every tile's AV1 sequence header and checks it against the tile's ispe.
    expect(readDimensions('avif', avif)).toEqual({ width: 320, height: 200 });
  });

  it("passes a source's own error through unchanged and closes the source", async () => {
    const damage = new AppError('UNSUPPORTED_FORMAT', 'The file is damaged.');
    let closed = 0;
    const source: RowSource = {
      ...frameSource(region(photo, 0, 0, 300, 300), { alpha: false }),
      async read() {
        throw damage;
      },
      close: () => closed++,
    };
    await expect(encodeToBytes(avifEncoder, source, Q80)).rejects.toBe(damage);
    expect(closed).toBe(1);
  });

  it('refuses an orientation still to apply (it writes rows where they come), with CONVERSION_FAILED', async () => {
    const source = frameSource(region(photo, 0, 0, 100, 100), { alpha: false });
    await expect(encodeToBytes(avifEncoder, source, { quality: 80, orientation: 6 })).rejects.toMatchObject({ code: 'CONVERSION_FAILED' });
    expect(avifEncoder.placesOrientation).toBe(false);
  });

  it('fails with CONVERSION_FAILED when the source ends early', async () => {
    const image = region(photo, 0, 0, 300, 300);
    const short = frameSource({ ...image, data: image.data.subarray(0, 300 * 200 * 4), height: 200 }, { alpha: false });
    const source: RowSource = { ...short, width: 300, height: 300 };
    await expect(encodeToBytes(avifEncoder, source, Q80)).rejects.toMatchObject({ code: 'CONVERSION_FAILED' });
  });
});

describe('AVIF results capped by the plan', () => {
  it('refuses with FILE_TOO_LARGE once the encoded tiles pass the cap, and keeps to it when they fit', async () => {
    const photo = await decodeJpeg(await corpus('photos/photo-1mp.jpg'));
    const full = await encodeToBytes(avifEncoder, frameSource(photo, { alpha: false }), Q80);
    const capped = await encodeToBytes(avifEncoder, frameSource(photo, { alpha: false }), { ...Q80, maxBytes: full.length });
    expect(sameBytes(capped, full)).toBe(true);
    const tooSmall = encodeToBytes(avifEncoder, frameSource(photo, { alpha: false }), { ...Q80, maxBytes: Math.floor(full.length / 2) });
    await expect(tooSmall).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });
});

function withAlpha(image: RgbaImage, alpha: (x: number, y: number) => number): RgbaImage {
  const data = Uint8Array.from(image.data);
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) data[(y * image.width + x) * 4 + 3] = alpha(x, y);
  return { ...image, data };
}

describe('AVIF encoder memory plan (encode-memory.ts)', () => {
  /** Deterministic white noise: the largest output any quality gives. */
  function noise(width: number, height: number, alpha: boolean): RgbaImage {
    const data = new Uint8Array(width * height * 4);
    let state = 12345;
    for (let i = 0; i < data.length; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      data[i] = alpha || i % 4 !== 3 ? state >>> 24 : 255;
    }
    return { data, width, height };
  }

  it.each([
    [600, 480, true, 100],
    [8000, 32, false, 100],
    [8000, 32, false, 80],
    [8000, 32, false, 60],
    [600, 480, true, 40],
  ])('holds no more than planned for %i x %i white noise (alpha: %s) at quality %i', async (width, height, alpha, quality) => {
    takeCodecMemoryBytes();
    const avif = await encodeToBytes(avifEncoder, frameSource(noise(width, height, alpha), { alpha }), { quality, orientation: 1 });
    expect(takeCodecMemoryBytes()).toBeLessThanOrEqual(avifEncoderWasmBytes(width, height));
    expect(avif.length).toBeLessThanOrEqual(avifEncodedBytes(width, height, alpha, quality));
    expect(avif.length).toBeGreaterThan(avifEncodedBytes(width, height, alpha, quality) * 0.6);
  });

  it('plans 16 MiB of encoder and about 10 MiB of buffers for a 24 MP result', () => {
    expect(avifEncoderWasmBytes(6000, 4000)).toBe(16 * MiB);
    // A row of 400 x 400 px tiles of the 6000 px width (no padding), one tile, its encoder file twice.
    expect(avifEncoderBufferBytes(6000, 4000, false, 80) / MiB).toBeCloseTo((400 * 6000 * 4 + 400 * 400 * 4 + 2 * (400 * 400 + 65536)) / MiB, 3);
  });
});
