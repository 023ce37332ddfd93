import webpEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js';
import webpEncoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { defaultOptions } from '@jsquash/webp/meta.js';
import { describe, expect, it } from 'vitest';
import { corpus, sameBytes } from '../../../../test/support/image-testing';
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

function noise(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let seed = 12345;
  for (let i = 0; i < data.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    data[i] = i % 4 === 3 ? 255 : seed >>> 24;
  }
  return { data, width, height };
}

const alphaCompression = (bytes: Uint8Array) => {
  const alph = [...webpChunks(bytes)].find((chunk) => chunk.type === 'ALPH')!;
  return bytes[alph.data] & 3;
};

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

  it('compresses alpha losslessly up to 1.6 MP and stores it as it is above, under the bounds', async () => {
    const photo = (await decodePeak(await corpus('photos/photo-12mp.webp'))).image;
    for (const [side, compression] of [[1200, 1], [1300, 0]]) {
      const image = masked(cropImage(photo, 0, 0, side, side));
      const stats = {} as WebpEncodeStats;
      const output = await encodeWebp(bandsOf(image, [16]), { quality: 80, orientation: 1 }, stats);
      expect(alphaCompression(output), `${side}x${side}`).toBe(compression);
      expect(stats.wasmBytes, `${side}x${side}`).toBeLessThanOrEqual(webpEncoderWasmBytes(side, side, true, 80));
      const { image: decoded } = await decodePeak(output);
      for (let i = 3; i < decoded.data.length; i += 4) if (decoded.data[i] !== image.data[i]) expect.fail(`${side}x${side}: alpha at byte ${i}`);
    }
  });
});
