import { describe, expect, it } from 'vitest';
import { corpus, decodeJpeg, sameBytes } from '../../../../test/support/image-testing';
import { bandsOf, cropImage, frameSource, readBands } from '../../../../test/support/row-sources';
import { ssim } from '../../../../test/support/ssim';
import { referenceDecode } from '../../../../test/workers/images';
import { readWebpDimensions, readWebpHeader } from './header';
import { webpChunks } from './riff';
import { applyOrientation } from '../../stages/orient';
import { type RowSource } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { openWebpDecode } from './decode';
import { encodeWebp, type WebpEncodeStats } from './encode';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { webpCodec } from '../../../../test/support/jsquash-webp';

/** The 1 MP benchmark photo, as today's JPEG decoder gives it. */
const photo = async (): Promise<RgbaImage> => decodeJpeg(await corpus('photos/photo-1mp.jpg'));

/** `image` with an alpha channel: a soft-edged ellipse, fully transparent in its corners. */
function withEllipseAlpha(image: RgbaImage): RgbaImage {
  const { width, height } = image;
  const data = Uint8Array.from(image.data);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot((x - width / 2) / (width * 0.45), (y - height / 2) / (height * 0.45));
      data[(y * width + x) * 4 + 3] = Math.max(0, Math.min(255, Math.round((1.1 - d) * 4 * 255)));
    }
  }
  return { data, width, height };
}

/** The same pixels imported by libwebp in one piece (one band of the whole height). */
const encodeWhole = (image: RgbaImage, quality = 80, alpha = true) =>
  encodeWebp(frameSource(image, { alpha }, () => {}, image.height), { quality, orientation: 1 });

const chunkTypes = (bytes: Uint8Array) => [...webpChunks(bytes)].map((chunk) => chunk.type);

async function decodeOurs(bytes: Uint8Array): Promise<RgbaImage> {
  return (await readBands(await openWebpDecode(bytes, readWebpHeader(bytes), { shrink: 1, region: null }))).image;
}

const BAND_HEIGHTS = [[1], [2], [7], [16], [64], [1, 2, 7, 16, 64, 3, 5]];

describe('libwebp encoder', () => {
  it('makes the same file from a picture filled band by band as from the pixels imported whole', async () => {
    const full = await photo();
    const images: Array<[string, RgbaImage]> = [
      ['1200x800 photo', full],
      ['1199x799 photo with alpha', withEllipseAlpha(cropImage(full, 1, 1, 1199, 799))],
      ['301x1 strip', cropImage(full, 10, 10, 301, 1)],
      ['1x203 strip', cropImage(full, 10, 10, 1, 203)],
    ];
    for (const [name, image] of images) {
      const whole = await encodeWhole(image);
      for (const heights of BAND_HEIGHTS) {
        const bytes = await encodeWebp(bandsOf(image, heights), { quality: 80, orientation: 1 });
        expect(sameBytes(bytes, whole), `${name} in bands of ${heights}`).toBe(true);
      }
    }
    expect(liveCodecMemoryBytes()).toBe(0);
  });

  it('writes each orientation 1-8 as the same file as the pixels oriented beforehand (orient.ts)', async () => {
    const image = withEllipseAlpha(cropImage(await photo(), 100, 50, 301, 203));
    for (let orientation = 1; orientation <= 8; orientation++) {
      const expected = await encodeWhole(applyOrientation(image, orientation));
      for (const heights of [[7], [16], [1, 2, 7, 16, 64, 3, 5]]) {
        const bytes = await encodeWebp(bandsOf(image, heights), { quality: 80, orientation });
        expect(readWebpDimensions(bytes), `orientation ${orientation}`).toEqual(orientation >= 5 ? { width: 203, height: 301 } : { width: 301, height: 203 });
        expect(sameBytes(bytes, expected), `orientation ${orientation} in bands of ${heights}`).toBe(true);
      }
    }
  });

  it('keeps alpha exactly and leaves it out when every pixel is opaque', async () => {
    const opaque = cropImage(await photo(), 0, 0, 640, 480);
    const transparent = withEllipseAlpha(opaque);
    const withAlpha = await encodeWebp(bandsOf(transparent, [16]), { quality: 80, orientation: 1 });
    expect(chunkTypes(withAlpha)).toEqual(['VP8X', 'ALPH', 'VP8 ']);
    const decoded = await decodeOurs(withAlpha);
    for (let i = 3; i < decoded.data.length; i += 4) if (decoded.data[i] !== transparent.data[i]) expect.fail(`alpha at byte ${i}`);

    // A source that may have alpha but has none: no ALPH chunk, the same file as an opaque source.
    const opaqueAsAlpha = await encodeWebp(bandsOf(opaque, [16], true), { quality: 80, orientation: 1 });
    expect(chunkTypes(opaqueAsAlpha)).toEqual(['VP8 ']);
    expect(sameBytes(opaqueAsAlpha, await encodeWebp(bandsOf(opaque, [16], false), { quality: 80, orientation: 1 }))).toBe(true);
  });

  it('makes larger files at higher qualities', async () => {
    const image = await photo();
    const sizes = [];
    for (const quality of [1, 20, 40, 60, 75, 80, 90, 95, 100]) {
      sizes.push((await encodeWebp(bandsOf(image, [16], false), { quality, orientation: 1 })).length);
    }
    for (let i = 1; i < sizes.length; i++) expect(sizes[i], `sizes ${sizes}`).toBeGreaterThan(sizes[i - 1]);
  });

  it('makes the file the service makes today (jSquash), byte for byte, at or above its SSIM floor', async () => {
    const input = await corpus('photos/photo-1mp.jpg');
    const image = await decodeJpeg(input);
    for (const quality of [50, 80, 100]) {
      const ours = await encodeWebp(bandsOf(image, [16], false), { quality, orientation: 1 });
      expect(sameBytes(ours, await webpCodec.encode(image, quality)), `quality ${quality}`).toBe(true);
    }
    // test/workers/encoder-quality.test.ts's measure and floor for WebP at quality 80.
    const ours = await encodeWebp(bandsOf(image, [16], false), { quality: 80, orientation: 1 });
    const score = ssim({ ...(await referenceDecode(input)), channels: 4 }, { ...(await referenceDecode(ours)), channels: 4 });
    expect(score).toBeGreaterThanOrEqual(0.955);
  });

  it('reports what it used, and closes its source and releases its instance on errors too', async () => {
    const image = cropImage(await photo(), 0, 0, 200, 100);
    const stats = {} as WebpEncodeStats;
    await encodeWebp(bandsOf(image, [16]), { quality: 80, orientation: 1 }, stats);
    expect(stats.settings).toEqual({ method: 4, lowMemory: false, alphaCompression: true });
    expect(stats.fallbacks).toBe(0);
    expect(stats.libwebpPeakBytes).toBeGreaterThan(200 * 100 * 1.5);

    const short: RowSource = { ...bandsOf(image, [16]), height: 101 };
    const sources = [bandsOf(image, [16]), bandsOf(image, [16]), bandsOf(image, [16])];
    await expect(encodeWebp(sources[0], { quality: 0, orientation: 1 })).rejects.toThrow(/quality/);
    await expect(encodeWebp(sources[1], { quality: 80, orientation: 9 })).rejects.toThrow(/orientation/);
    await expect(encodeWebp({ ...sources[2], model: 'cmyk' }, { quality: 80, orientation: 1 })).rejects.toThrow(/cmyk/);
    await expect(encodeWebp(short, { quality: 80, orientation: 1 })).rejects.toThrow(/ended after 100 of 101 rows/);
    expect(sources.every((source) => source.closed())).toBe(true);
    expect(liveCodecMemoryBytes()).toBe(0);
  });
});
