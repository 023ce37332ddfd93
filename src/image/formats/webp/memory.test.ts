import webpEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js';
import webpEncoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { defaultOptions } from '@jsquash/webp/meta.js';
import { describe, expect, it } from 'vitest';
import { corpus, decodeRgba, sameBytes } from '../../../../test/support/image-testing';
import { bandsOf, cropImage, readBands } from '../../../../test/support/row-sources';
import { readWebpDimensions, readWebpHeader } from './header';
import { webpChunks } from './riff';
import type { RowSource } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { jsquashCodec, type EmscriptenEncoder } from '../../../../test/support/jsquash';
import { openWebpDecode } from './decode';
import { encodeWebp, type WebpEncodeStats } from './encode';
import { webpDecoderWasmBytes, webpEncoderWasmBytes } from './memory';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { sharpenRows } from '../../stages/sharpen';

/*
 * The memory the libwebp instances grow to stays under the bounds libwebp-memory.ts gives the
 * memory plan, on real runs: and those bounds are far from what holding a whole RGBA frame
 * (4 bytes a pixel) inside the instance would take.
 */

const jsquashEncoder = jsquashCodec<EmscriptenEncoder<typeof defaultOptions>>(webpEncoderFactory, webpEncoderWasm);

/** A WebP made by jSquash's (newer) libwebp: lossless, or lossy with its own ALPH coding. */
async function jsquashWebp(image: RgbaImage, lossless: boolean): Promise<Uint8Array> {
  const bytes = await jsquashEncoder.run((webp) => webp.encode(image.data, image.width, image.height, { ...defaultOptions, quality: 80, lossless: lossless ? 1 : 0 }));
  if (!bytes) throw new Error('jSquash could not encode');
  return new Uint8Array(bytes);
}

/** A source that notes the codec memory alive while its bands are read (the decoder's instance). */
function watched(source: RowSource, peak: { bytes: number }): RowSource {
  return {
    ...source,
    async read() {
      const band = await source.read();
      peak.bytes = Math.max(peak.bytes, liveCodecMemoryBytes());
      return band;
    },
  };
}

async function decodePeak(bytes: Uint8Array): Promise<{ image: RgbaImage; wasmBytes: number }> {
  const peak = { bytes: 0 };
  const { image } = await readBands(watched(await openWebpDecode(bytes, readWebpHeader(bytes), { shrink: 1, region: null }), peak));
  return { image, wasmBytes: peak.bytes };
}

/** `image` with a soft-edged elliptic alpha mask. */
function masked(image: RgbaImage): RgbaImage {
  const { width, height } = image;
  const data = Uint8Array.from(image.data);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot((x - width / 2) / (width * 0.4), (y - height / 2) / (height * 0.4));
      data[(y * width + x) * 4 + 3] = Math.max(0, Math.min(255, Math.round((1.1 - d) * 10 * 255)));
    }
  }
  return { data, width, height };
}

function alphaOf(width: number, height: number, alpha: (x: number, y: number) => number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set([(x * 3) & 255, (y * 5) & 255, (x + y) & 255, alpha(x, y)], (y * width + x) * 4);
  }
  return { data, width, height };
}

/** `image` with its red channel (noise, for noise()) as its alpha. */
function withAlphaOf(image: RgbaImage): RgbaImage {
  for (let i = 0; i < image.data.length; i += 4) image.data[i + 3] = image.data[i];
  return image;
}

function noise(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let seed = 12345;
  for (let i = 0; i < data.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    data[i] = i % 4 === 3 ? 255 : seed >>> 24;
  }
  return { data, width, height };
}

const alphChunk = (bytes: Uint8Array) => [...webpChunks(bytes)].find((chunk) => chunk.type === 'ALPH')!;
/** The ALPH chunk's header: compression method (0 none, 1 lossless) and filter (0 none, 3 gradient). */
const alphaCoding = (bytes: Uint8Array) => {
  const header = bytes[alphChunk(bytes).data];
  return { compression: header & 3, filter: (header >> 2) & 3 };
};

/** The alpha of a decoded picture against its source's, exactly. */
function expectSameAlpha(decoded: RgbaImage, image: RgbaImage, what: string): void {
  for (let i = 3; i < decoded.data.length; i += 4) if (decoded.data[i] !== image.data[i]) expect.fail(`${what}: alpha at byte ${i}`);
}

describe('libwebp memory', () => {
  it('decodes the 12 MP photo holding its file and a few rows, under the bound', async () => {
    const bytes = await corpus('photos/photo-12mp.webp');
    const { image, wasmBytes } = await decodePeak(bytes);
    expect([image.width, image.height]).toEqual([4000, 3000]);
    const bound = webpDecoderWasmBytes(readWebpHeader(bytes).stream);
    expect(wasmBytes).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThan(bytes.length + 3 * 2 ** 20); // a whole RGBA frame would be 48 MB
  });

  it('decodes lossless and lossy-with-alpha files of other encoders under the bound', async () => {
    const photo = (await decodePeak(await corpus('photos/photo-12mp.webp'))).image;
    const image = masked(cropImage(photo, 500, 500, 1500, 1000));
    for (const lossless of [true, false]) {
      const bytes = await jsquashWebp(image, lossless);
      const { image: decoded, wasmBytes } = await decodePeak(bytes);
      expect(wasmBytes, `lossless ${lossless}`).toBeLessThanOrEqual(webpDecoderWasmBytes(readWebpHeader(bytes).stream));
      // Lossless keeps every pixel but the colour under alpha 0 (libwebp's `exact` is off).
      if (lossless) {
        const visible = (data: Uint8Array | Uint8ClampedArray) => data.map((value, i) => (data[i - (i % 4) + 3] === 0 ? 0 : value));
        expect(sameBytes(visible(decoded.data), visible(image.data))).toBe(true);
      }
    }
  });

  it('encodes the 12 MP photo with the token buffer, as sharp does, under the bound', async () => {
    const bytes = await corpus('photos/photo-12mp.webp');
    const stats = {} as WebpEncodeStats;
    const output = await encodeWebp(await openWebpDecode(bytes, readWebpHeader(bytes), { shrink: 1, region: null }), { quality: 80, orientation: 6 }, stats);
    expect(readWebpDimensions(output)).toEqual({ width: 3000, height: 4000 });
    expect(stats).toMatchObject({ settings: { method: 4, lowMemory: false }, fallbacks: 0 });
    const pixels = 12e6;
    expect(stats.wasmBytes).toBeLessThanOrEqual(webpEncoderWasmBytes(3000, 4000, false, 80));
    expect(stats.wasmBytes).toBeLessThan(1.5 * pixels + 4 * pixels); // the picture beside an RGBA frame
  });

  it('encodes a picture with more detail than a photo (the 1 MP photo sharpened) once, with the token buffer, under the bound', async () => {
    const image = (await decodeRgba('jpeg', await corpus('photos/photo-1mp.jpg'))) as RgbaImage;
    expect([image.width, image.height]).toEqual([1200, 800]);
    const stats = {} as WebpEncodeStats;
    const output = await encodeWebp(sharpenRows(bandsOf(image, [16], false), 1), { quality: 80, orientation: 1 }, stats);
    // More VP8 data a pixel than the photo estimate the plan starts from (0.34 at q80).
    expect(output.byteLength / (1200 * 800)).toBeGreaterThan(0.34);
    expect(stats).toMatchObject({ settings: { lowMemory: false }, fallbacks: 0 });
    expect(stats.wasmBytes).toBeLessThanOrEqual(webpEncoderWasmBytes(1200, 800, false, 80));
  });

  it('encodes again with low_memory when the token buffer would go over the limit', async () => {
    const stats = {} as WebpEncodeStats;
    const output = await encodeWebp(bandsOf(noise(2000, 2000), [16], false), { quality: 100, orientation: 1 }, stats);
    expect(readWebpDimensions(output)).toEqual({ width: 2000, height: 2000 });
    expect(stats.fallbacks).toBe(1);
    expect(stats.settings.lowMemory).toBe(true);
    expect(stats.wasmBytes).toBeLessThanOrEqual(webpEncoderWasmBytes(2000, 2000, false, 100));
  });

  it('refuses with FILE_TOO_LARGE a picture whose VP8 data outgrows the room the plan gave the result', async () => {
    const encoding = encodeWebp(bandsOf(noise(1000, 1000), [16], false), { quality: 80, orientation: 1, lowMemory: true, maxBytes: 300_000 });
    await expect(encoding).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  it('compresses alpha with libwebp up to 1.6 MP and with the compact encoder above, losslessly, under the bounds', async () => {
    const photo = (await decodePeak(await corpus('photos/photo-12mp.webp'))).image;
    // libwebp picks its filter by trying them; the compact encoder always takes the gradient filter.
    for (const [side, coding] of [[1200, { compression: 1 }], [1300, { compression: 1, filter: 3 }]] as const) {
      const image = masked(cropImage(photo, 0, 0, side, side));
      const stats = {} as WebpEncodeStats;
      const output = await encodeWebp(bandsOf(image, [16]), { quality: 80, orientation: 1 }, stats);
      expect(alphaCoding(output), `${side}x${side}`).toMatchObject(coding);
      // A mask's plane codes to a small part of its 1 byte a pixel.
      expect(alphChunk(output).length, `${side}x${side}`).toBeLessThan(side * side * 0.05);
      expect(stats.wasmBytes, `${side}x${side}`).toBeLessThanOrEqual(webpEncoderWasmBytes(side, side, true, 80));
      expectSameAlpha((await decodePeak(output)).image, image, `${side}x${side}`);
    }
  });

  // libwebp's lossless alpha encoder would hold 28 bytes a pixel (336 MB); stored as it is, the
  // plane made the file 13 MB, over the room the plan had left, and the conversion failed.
  it('encodes a 12 MP photo with uniform half transparency within the Pro budget, its alpha exact and compact', async () => {
    const photo = (await decodePeak(await corpus('photos/photo-12mp.webp'))).image;
    for (let i = 3; i < photo.data.length; i += 4) photo.data[i] = 128;
    const stats = {} as WebpEncodeStats;
    const output = await encodeWebp(bandsOf(photo, [16]), { quality: 80, orientation: 1 }, stats);
    expect(alphaCoding(output)).toEqual({ compression: 1, filter: 3 });
    expect(alphChunk(output).length).toBeLessThan(100_000);
    expect(stats.wasmBytes).toBeLessThanOrEqual(webpEncoderWasmBytes(4000, 3000, true, 80));
    expectSameAlpha((await decodePeak(output)).image, photo, '12 MP');
  }, 60_000);

  it('codes gradients and odd sizes exactly, and stores a plane of noise as it is', async () => {
    const cases: [string, RgbaImage, number][] = [
      ['radial gradient 1701x999', alphaOf(1701, 999, (x, y) => 255 - Math.min(255, Math.round(Math.hypot(x - 850, y - 500) / 3))), 1],
      ['ramp 1300x1301', alphaOf(1300, 1301, (x) => Math.floor((x / 1300) * 255)), 1],
      ['noise 1400x1200', withAlphaOf(noise(1400, 1200)), 0],
    ];
    for (const [what, image, compression] of cases) {
      const output = await encodeWebp(bandsOf(image, [7]), { quality: 80, orientation: 1 });
      expect(alphaCoding(output).compression, what).toBe(compression);
      expectSameAlpha((await decodePeak(output)).image, image, what);
    }
  });
});
