import webpEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js';
import webpEncoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { defaultOptions } from '@jsquash/webp/meta.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { corpus, decodeWebp, largeInput, mutated, prefixLengths, sameBytes, WEBPS } from '../../../../test/support/image-testing';
import { cropImage, frameSource, readBands } from '../../../../test/support/row-sources';
import { AppError } from '../../../errors';
import { concat } from '../../bytes';
import { readWebpDimensions, readWebpHeader } from './header';
import { riffHeader, webpChunk, webpChunks } from './riff';
import type { Region } from '../../operations';
import type { RgbaImage } from '../../types';
import { placeOnCanvas } from '../../../../test/support/webp-reference';
import { jsquashCodec, type EmscriptenEncoder } from '../../../../test/support/jsquash';
import { openWebpDecode } from './decode';
import { decodeWebpWhole } from '../../../../test/support/webp-reference';
import { encodeWebp } from './encode';

import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';

const BAND_ROWS = [1, 7, 16, 64];
const SMALL_WEBPS = Object.keys(WEBPS).filter((file) => !file.startsWith('photos/'));

/** The band decode of `bytes` (all of it, or `region`) as one frame, with the band heights. */
async function decodeInBands(bytes: Uint8Array, bandRows: number, region: Region | null = null) {
  return readBands(await openWebpDecode(bytes, readWebpHeader(bytes), { shrink: 1, region }, bandRows));
}

/** The reference: libwebp's WebPDecodeRGBA of the whole file, or the AppError it gives. */
async function wholeOrError(bytes: Uint8Array): Promise<RgbaImage | AppError> {
  try {
    return await decodeWebpWhole(bytes);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

const jsquashEncoder = jsquashCodec<EmscriptenEncoder<typeof defaultOptions>>(webpEncoderFactory, webpEncoderWasm);

/**
 * A lossless WebP of `image` made by jSquash's libwebp (ours only encodes lossy). Its encoder looks
 * for back-references 256 rows back at the default quality, and as far as the format allows at 100.
 */
async function losslessWebp(image: RgbaImage, quality = defaultOptions.quality): Promise<Uint8Array> {
  const bytes = await jsquashEncoder.run((webp) => webp.encode(image.data, image.width, image.height, { ...defaultOptions, quality, lossless: 1 }));
  if (!bytes) throw new Error('jSquash could not encode');
  return new Uint8Array(bytes);
}

/** Rows that repeat every `period` rows: a lossless encoder codes the repeats as long back-references. */
function repeatingRows(width: number, height: number, period: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const seed = Math.imul((y % period) * 31 + x + 1, 2654435761) >>> 0;
      data.set([seed & 255, (seed >>> 8) & 255, (seed >>> 16) & 255, (seed >>> 24) | 1], (y * width + x) * 4);
    }
  }
  return { data, width, height };
}

/** An animated WebP of one frame (`still`'s bitstream) at (x, y) on a width x height canvas. */
function animatedWebp(width: number, height: number, still: Uint8Array, x: number, y: number): Uint8Array {
  const le24 = (v: number) => [v & 255, (v >> 8) & 255, (v >> 16) & 255];
  const frame = readWebpDimensions(still);
  const data = concat([...webpChunks(still)].filter((c) => ['ALPH', 'VP8 ', 'VP8L'].includes(c.type)).map((c) => webpChunk(c.type, still.subarray(c.data, c.data + c.length))));
  const anmf = webpChunk('ANMF', [...le24(x / 2), ...le24(y / 2), ...le24(frame.width - 1), ...le24(frame.height - 1), ...le24(100), 0, ...data]);
  const body = concat([webpChunk('VP8X', [0x12, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]), webpChunk('ANIM', [0, 0, 0, 0, 0, 0]), anmf]);
  return concat([riffHeader(4 + body.length), body]);
}

/** A 40x30 lossy WebP with alpha made by our encoder. */
async function smallStill(): Promise<Uint8Array> {
  const image = repeatingRows(40, 30, 7);
  return encodeWebp(frameSource(image, { alpha: true }), { quality: 90, orientation: 1 });
}

describe('libwebp band decoder', () => {
  it('decodes every corpus WebP in bands of 1, 7, 16 and 64 rows exactly as libwebp decodes the whole file', async () => {
    for (const file of SMALL_WEBPS) {
      const bytes = await corpus(file);
      const whole = await wholeOrError(bytes);
      // libwebp 1.2.4 decodes both files the corpus README calls broken: very_short.webp is a valid
      // stream cut after its last used byte, and bad_palette_index.webp maps its out-of-palette
      // indexes to transparent black as the lossless format specifies.
      expect(whole, file).not.toBeInstanceOf(AppError);
      const [width, height] = WEBPS[file];
      for (const bandRows of BAND_ROWS) {
        const { image, heights } = await decodeInBands(bytes, bandRows);
        expect([image.width, image.height], file).toEqual([width, height]);
        expect(Math.max(...heights), file).toBeLessThanOrEqual(bandRows);
        expect(sameBytes(image.data, (whole as RgbaImage).data), `${file} in bands of ${bandRows}`).toBe(true);
      }
      expect(liveCodecMemoryBytes()).toBe(0);
    }
  });

  it('says a file has no alpha only for lossy files without an ALPH chunk, whose pixels are all opaque', async () => {
    for (const file of SMALL_WEBPS) {
      const bytes = await corpus(file);
      const types = [...webpChunks(bytes)].map((chunk) => chunk.type);
      const source = await openWebpDecode(bytes, readWebpHeader(bytes), { shrink: 1, region: null });
      expect(source.alpha, file).toBe(types.includes('ALPH') || types.includes('VP8L'));
      const { image } = await readBands(source);
      if (!source.alpha) for (let i = 3; i < image.data.length; i += 4) expect(image.data[i], file).toBe(255);
    }
  });

  it('gives the same pixels as the jSquash decoder the service uses today', async () => {
    for (const file of Object.keys(WEBPS)) {
      const bytes = await corpus(file);
      const { image } = await decodeInBands(bytes, 16);
      const today = await decodeWebp(bytes);
      expect(sameBytes(image.data, today.data), file).toBe(true);
    }
  });

  it('resumes lossless decoding across back-references that reach thousands of rows back', async () => {
    for (const [width, height, period] of [[3, 4000, 900], [1, 3000, 1200], [37, 700, 100]]) {
      const source = repeatingRows(width, height, period);
      const bytes = await losslessWebp(source);
      for (const bandRows of BAND_ROWS) {
        const { image } = await decodeInBands(bytes, bandRows);
        expect(sameBytes(image.data, source.data), `${width}x${height} in bands of ${bandRows}`).toBe(true);
      }
    }
  });

  it('keeps a ring of the lossless pixels: back-references of the longest distance the format has, across many moves of the ring', async () => {
    // Rows repeat every 1,040 rows of 1,000 pixels: a back-reference of 1,040,000 pixels, near the
    // format's 1,048,456. The ring (2.2 M pixels here) moves every million pixels of the 4 M.
    const source = repeatingRows(1000, 4000, 1040);
    const bytes = await losslessWebp(source, 100);
    // Random rows coded as literals would take 4 bytes a pixel: the repeats are back-references.
    expect(bytes.byteLength).toBeLessThan(1040 * 1000 * 4 * 1.1);
    for (const bandRows of [1, 16, 64]) {
      const { image } = await decodeInBands(bytes, bandRows);
      expect(sameBytes(image.data, source.data), `in bands of ${bandRows}`).toBe(true);
    }
  });

  it("decodes a 5K lossless photo (a screenshot's size) as libwebp decodes the whole file, holding a ring instead of 59 MB of pixels", { timeout: 60_000 }, async () => {
    const bytes = await largeInput('webp-lossless-15mp.webp');
    const header = readWebpHeader(bytes);
    expect([header.width, header.height]).toEqual([5120, 2880]);
    const source = await openWebpDecode(bytes, header, { shrink: 1, region: null }, 16);
    let peak = 0;
    const rows = new Uint8Array(5120 * 2880 * 4);
    for (let band = await source.read(); band; band = await source.read()) {
      peak = Math.max(peak, liveCodecMemoryBytes());
      rows.set(band.data, band.y * 5120 * 4);
    }
    // The file, the ring (8.9 MB), the transforms' sub-images and tables; the whole image is 59 MB.
    expect(peak).toBeLessThan(bytes.byteLength + 24 * 2 ** 20);
    const whole = await decodeWebpWhole(bytes);
    expect(sameBytes(rows, whole.data)).toBe(true);
  });

  it('decodes an animation as its first frame on a transparent canvas', async () => {
    const still = await smallStill();
    const frame = await decodeWebpWhole(still);
    for (const [canvasWidth, canvasHeight, x, y] of [[64, 48, 10, 6], [40, 30, 0, 0], [41, 31, 0, 0], [50, 99, 10, 68]]) {
      const animated = animatedWebp(canvasWidth, canvasHeight, still, x, y);
      const expected = placeOnCanvas(frame, { width: canvasWidth, height: canvasHeight }, { x, y });
      for (const bandRows of [1, 7, 16]) {
        const source = await openWebpDecode(animated, readWebpHeader(animated), { shrink: 1, region: null }, bandRows);
        expect(source.alpha).toBe(true);
        const { image } = await readBands(source);
        expect([image.width, image.height]).toEqual([canvasWidth, canvasHeight]);
        expect(sameBytes(image.data, expected.data), `${canvasWidth}x${canvasHeight} at ${x},${y} in bands of ${bandRows}`).toBe(true);
      }
    }
  });

  it('decodes a region exactly as cropping the whole decode', async () => {
    const animated = animatedWebp(64, 48, await smallStill(), 10, 6);
    const files: Array<[string, Uint8Array]> = [['animated', animated]];
    for (const file of ['webp/vp80-05-sharpness-1428.webp', 'webp/lossless1.webp', 'webp/lossy_alpha1.webp', 'webp/small_31x13.webp']) {
      files.push([file, await corpus(file)]);
    }
    for (const [name, bytes] of files) {
      const { image: whole } = await decodeInBands(bytes, 64);
      const { width, height } = whole;
      const regions: Region[] = [
        { x: 0, y: 0, width, height },
        { x: 1, y: 1, width: width - 2, height: height - 2 },
        { x: 3, y: 5, width: Math.min(17, width - 3), height: Math.min(9, height - 5) },
        { x: width - 1, y: height - 1, width: 1, height: 1 },
        { x: 0, y: Math.floor(height / 2), width, height: height - Math.floor(height / 2) },
        { x: Math.floor(width / 3), y: 0, width: Math.ceil(width / 3), height },
      ];
      for (const region of regions) {
        const expected = cropImage(whole, region.x, region.y, region.width, region.height);
        for (const bandRows of [1, 7, 16]) {
          const { image, heights } = await decodeInBands(bytes, bandRows, region);
          expect(Math.max(...heights)).toBeLessThanOrEqual(bandRows);
          expect(sameBytes(image.data, expected.data), `${name} ${JSON.stringify(region)} in bands of ${bandRows}`).toBe(true);
        }
      }
    }
  });
});

describe('libwebp band decoder on damaged files', () => {
  /** Decodes all of `bytes`: pixels, or the AppError; any other throw fails the test. */
  async function outcome(bytes: Uint8Array): Promise<'decoded' | string> {
    try {
      await decodeInBands(bytes, 16);
      return 'decoded';
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return error.code;
    } finally {
      expect(liveCodecMemoryBytes(), 'every instance is released').toBe(0);
    }
  }

  const DAMAGED_SOURCES = ['webp/test.webp', 'webp/lossless1.webp', 'webp/lossy_alpha4.webp', 'webp/alpha_filter_1_method_1.webp'];

  it('refuses truncated files with UNSUPPORTED_FORMAT, or decodes what libwebp accepts as a complete stream', async () => {
    const outcomes = new Set<string>();
    for (const file of DAMAGED_SOURCES) {
      const bytes = await corpus(file);
      for (const length of prefixLengths(bytes.length, 128, 64)) {
        const result = await outcome(bytes.subarray(0, length));
        outcomes.add(result);
        expect(['decoded', 'UNSUPPORTED_FORMAT'], `${file} cut to ${length} bytes`).toContain(result);
      }
    }
    expect(outcomes).toContain('UNSUPPORTED_FORMAT');
  });

  it('refuses a still image whose VP8X flags an animation it does not hold (found by the property below)', async () => {
    const le24 = (v: number) => [v & 255, (v >> 8) & 255, (v >> 16) & 255];
    const still = await smallStill();
    const chunks = [...webpChunks(still)].filter((c) => ['ALPH', 'VP8 '].includes(c.type)).map((c) => webpChunk(c.type, still.subarray(c.data, c.data + c.length)));
    const body = concat([webpChunk('VP8X', [0x12, 0, 0, 0, ...le24(40 - 1), ...le24(30 - 1)]), ...chunks]);
    expect(await outcome(concat([riffHeader(4 + body.length), body]))).toBe('UNSUPPORTED_FORMAT');
  });

  it('refuses mutated files with UNSUPPORTED_FORMAT or decodes them, never trapping', async () => {
    for (const file of DAMAGED_SOURCES) {
      const bytes = await corpus(file);
      await fc.assert(
        fc.asyncProperty(mutated(bytes), async (copy) => {
          expect(['decoded', 'UNSUPPORTED_FORMAT']).toContain(await outcome(copy));
        }),
        { numRuns: 150 },
      );
    }
  });
});
