import { describe, expect, it } from 'vitest';
import { corpus, maxDifference, referenceJpegEncode, sameBytes } from '../../../../test/support/image-testing';
import { psnr } from '../../../../test/support/ssim';
import { readJpegHeader } from './header';
import { PackedAllowanceExceeded, type RowSource } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { encodeJpeg, jpegEncoder, writeJpeg, type JpegEncodeStats } from './encode';
import { encoderLibjpegBytes, JPEG_FINISH_DRAIN_BYTES, jpegEncodeWasmBytes, jpegFinishBurstBytes, jpegResultBytes } from './memory';
import type { ResultSink } from '../../result-sink';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { codecMemoryPool } from '../../codecs/memory-pool';
import { openDecode } from '../../../../test/support/formats';
import { collectFrame, cropImage, frameSource } from '../../../../test/support/row-sources';
import { applyOrientation } from '../../stages/orient';
import { encodeToBytes, ResultBuffer } from '../../result-buffer';

async function decode(bytes: Uint8Array, shrink = 1): Promise<RgbaImage> {
  return collectFrame(await openDecode(bytes, { shrink, region: null }));
}

/** The 1 MP photo at 1/4 (300x200): real content, small enough to encode a hundred times. */
async function smallPhoto(): Promise<RgbaImage> {
  return decode(await corpus('photos/photo-1mp.jpg'), 4);
}

const source = (image: RgbaImage, bandRows = 16, grey = false): RowSource => frameSource(image, { alpha: false, grey }, () => {}, bandRows);
const rgba = (image: RgbaImage) => ({ data: image.data, width: image.width, height: image.height, channels: 4 });

describe('encodeJpeg: sharp\'s default jpeg({ quality }) settings', () => {
  it('writes byte for byte sharp\'s file at every quality 1..100 (optimised Huffman tables)', async () => {
    const image = await smallPhoto();
    for (let quality = 1; quality <= 100; quality++) {
      const ours = await encodeJpeg(source(image), { quality, optimizeHuffman: true });
      const sharps = await referenceJpegEncode(image, quality);
      expect({ quality, length: ours.length, same: sameBytes(ours, sharps) }).toEqual({ quality, length: sharps.length, same: true });
    }
  }, 120_000);

  it('with libjpeg\'s standard tables, codes the same coefficients: same pixels, more bytes', async () => {
    const image = await smallPhoto();
    for (const quality of [1, 50, 80, 95, 100]) {
      const optimised = await encodeJpeg(source(image), { quality, optimizeHuffman: true });
      const standard = await encodeJpeg(source(image), { quality, optimizeHuffman: false });
      expect(standard.length, `q${quality}`).toBeGreaterThan(optimised.length);
      expect(maxDifference((await decode(standard)).data, (await decode(optimised)).data), `q${quality}`).toBe(0);
    }
  });

  it('matches sharp on the 12 MP photo at q80 and q95: the same bytes, or the same pixels (so the same SSIM) with standard tables', async () => {
    const image = await decode(await corpus('photos/photo-12mp.jpg'));
    const report: Record<string, unknown> = {};
    for (const quality of [80, 95]) {
      const sharps = await referenceJpegEncode(image, quality);
      const optimised = await encodeJpeg(source(image), { quality, optimizeHuffman: true });
      const standard = await encodeJpeg(source(image), { quality, optimizeHuffman: false });
      report[`q${quality}`] = { sharp: sharps.length, optimised: optimised.length, standard: standard.length, standardExtra: `${((standard.length / sharps.length - 1) * 100).toFixed(1)}%` };
      expect(sameBytes(optimised, sharps), `q${quality} optimised`).toBe(true);
      expect(maxDifference((await decode(standard)).data, (await decode(sharps)).data), `q${quality} standard`).toBe(0);
      // Measured: 6.2% more bytes at q80, 16.9% at q95 (SSIM 0.92759 and 0.99793 for both: bench/jpeg-codec.ts).
      expect(standard.length / sharps.length).toBeLessThan(quality === 80 ? 1.07 : 1.18);
    }
    console.log('12 MP photo, encodeJpeg against sharp:', report);
  }, 120_000);
});

describe('encodeJpeg: bands in, file out', () => {
  it('writes the same bytes whatever the band heights it is fed', async () => {
    const image = await smallPhoto();
    for (const optimizeHuffman of [true, false]) {
      const expected = await encodeJpeg(source(image, 16), { quality: 85, optimizeHuffman });
      for (const bandRows of [1, 7, 17, 64, image.height]) {
        const ours = await encodeJpeg(source(image, bandRows), { quality: 85, optimizeHuffman });
        expect({ optimizeHuffman, bandRows, same: sameBytes(ours, expected) }).toEqual({ optimizeHuffman, bandRows, same: true });
      }
    }
  });

  it('decodes back to the input within JPEG\'s error', async () => {
    const image = await decode(await corpus('photos/photo-1mp.jpg'));
    const measured: Record<string, number> = {};
    for (const quality of [95, 80, 30]) {
      const back = await decode(await encodeJpeg(source(image), { quality, optimizeHuffman: false }));
      expect({ width: back.width, height: back.height }).toEqual({ width: image.width, height: image.height });
      measured[`q${quality}`] = psnr(rgba(image), rgba(back));
    }
    console.log('1 MP photo, PSNR of the round trip:', measured);
    // Measured (the photo, itself a q90 JPEG, carries sensor-like noise): q95 47.2 dB, q80 31.6 dB, q30 27.3 dB.
    expect(measured.q95).toBeGreaterThan(45);
    expect(measured.q80).toBeGreaterThan(30);
    expect(measured.q30).toBeGreaterThan(26);
  });

  it('writes a one-component JPEG from a grey source, equal to the RGB encode\'s luma', async () => {
    const colour = await smallPhoto();
    const grey = new Uint8Array(colour.data);
    for (let i = 0; i < grey.length; i += 4) grey.fill(Math.round(0.299 * grey[i] + 0.587 * grey[i + 1] + 0.114 * grey[i + 2]), i, i + 3);
    const image = { data: grey, width: colour.width, height: colour.height };
    const bytes = await encodeJpeg(source(image, 16, true), { quality: 90, optimizeHuffman: true });
    const frame = readJpegHeader(bytes).frame;
    expect({ components: frame.components, sampling: frame.sampling }).toEqual({ components: 1, sampling: [{ h: 1, v: 1 }] });
    const back = await decode(bytes);
    for (let i = 0; i < back.data.length; i += 4) {
      if (back.data[i] !== back.data[i + 1] || back.data[i] !== back.data[i + 2]) throw new Error(`pixel ${i / 4} is not grey`);
    }
    expect(psnr(rgba(image), rgba(back))).toBeGreaterThan(36); // measured 38.0 dB at q90
    expect(bytes.length).toBeLessThan((await encodeJpeg(source(image), { quality: 90, optimizeHuffman: true })).length);
  });

  it('refuses CMYK bands and a source that ends early, closing the source and releasing the instance', async () => {
    const image = await smallPhoto();
    const before = liveCodecMemoryBytes();
    let closed = 0;
    const cmyk: RowSource = { ...frameSource(image, { alpha: false, model: 'cmyk' }), close: () => closed++ };
    await expect(encodeJpeg(cmyk, { quality: 80, optimizeHuffman: false })).rejects.toThrow(/cmyk/);
    const short = frameSource({ ...image, height: image.height }, { alpha: false });
    const read = short.read.bind(short);
    let bands = 0;
    const ending: RowSource = { ...short, read: async () => (++bands > 3 ? null : read()), close: () => closed++ };
    await expect(encodeJpeg(ending, { quality: 80, optimizeHuffman: false })).rejects.toThrow(/ended after 48 of 200 rows/);
    expect(closed).toBe(2);
    expect(liveCodecMemoryBytes()).toBe(before);
  });
});

describe('writeJpeg with optimised tables: the file drained as it comes out', () => {
  it('never writes more than jpegFinishBurstBytes between two drains, and the file is the same', async () => {
    const image = await decode(await corpus('photos/photo-12mp.jpg'));
    const output = new ResultBuffer(jpegResultBytes(image.width * image.height, 95));
    let sinceDrain = 0;
    let mostBetweenDrains = 0;
    let drainsWithData = 0;
    const sink: ResultSink = {
      write: (chunk) => {
        output.write(chunk);
        sinceDrain += chunk.byteLength;
        mostBetweenDrains = Math.max(mostBetweenDrains, sinceDrain);
      },
      writeOwned: (bytes) => output.writeOwned(bytes),
      drain: async () => {
        if (sinceDrain > 0) drainsWithData++;
        sinceDrain = 0;
      },
      get length() {
        return output.length;
      },
      get heldBytes() {
        return output.heldBytes;
      },
      get peakHeldBytes() {
        return output.peakHeldBytes;
      },
    };
    await writeJpeg(source(image), { quality: 95, optimizeHuffman: true }, sink);
    const file = output.bytes();
    // 3.5 MB at q95, all of it written inside encoder_finish.
    expect(file.length).toBeGreaterThan(3 * JPEG_FINISH_DRAIN_BYTES);
    expect(drainsWithData).toBeGreaterThanOrEqual(3);
    expect(mostBetweenDrains).toBeLessThanOrEqual(jpegFinishBurstBytes(image.width, image.height, 95, false));
    expect(sameBytes(file, await encodeJpeg(source(image), { quality: 95, optimizeHuffman: true }))).toBe(true);
  }, 60_000);
});

describe('writeJpeg with optimised tables and the coefficients packed', () => {
  it('writes the same file within an allowance of half a byte a pixel, and fails before writing anything above it', async () => {
    const image = await decode(await corpus('photos/photo-12mp.jpg'));
    const pixels = image.width * image.height;
    const unpacked: JpegEncodeStats = { libjpegPeakBytes: 0, wasmBytes: 0 };
    const expected = await encodeJpeg(source(image), { quality: 80, optimizeHuffman: true }, unpacked);
    const packed: JpegEncodeStats = { libjpegPeakBytes: 0, wasmBytes: 0 };
    const ours = await encodeJpeg(source(image), { quality: 80, optimizeHuffman: true, packedBytes: pixels / 2 }, packed);
    expect(sameBytes(ours, expected)).toBe(true);
    // Measured: 11.9 MiB against 36.8.
    expect(packed.libjpegPeakBytes).toBeLessThan(unpacked.libjpegPeakBytes / 2.5);
    expect(packed.libjpegPeakBytes).toBeLessThanOrEqual(encoderLibjpegBytes(image.width, image.height, 3, true, pixels / 2));

    const output = new ResultBuffer(jpegResultBytes(pixels, 95));
    const before = liveCodecMemoryBytes();
    codecMemoryPool.take('jpeg-encoder');
    // q95 packs to about 0.66 bytes a pixel.
    await expect(writeJpeg(source(image), { quality: 95, optimizeHuffman: true, packedBytes: pixels / 2 }, output)).rejects.toBeInstanceOf(PackedAllowanceExceeded);
    expect(output.length).toBe(0);
    expect(liveCodecMemoryBytes()).toBe(before);
    // Its grown memory is not handed to the standard tables' encode that follows (as excess it would hold the admission up).
    expect(codecMemoryPool.take('jpeg-encoder')).toBeUndefined();
  }, 60_000);
});

describe('writeJpeg with an EXIF orientation to apply', () => {
  /** A picture whose every pixel differs from its neighbours, so a misplaced one shows. */
  function pattern(width: number, height: number, grey: boolean): RgbaImage {
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      const [x, y] = [i % width, Math.floor(i / width)];
      const v = (x * 37 + y * 91 + ((x * y) % 23) * 11) & 255;
      data.set(grey ? [v, v, v, 255] : [v, (x * 7 + y * 3) & 255, (255 - y * 5 + x) & 255, 255], i * 4);
    }
    return { data, width, height };
  }

  it('writes for each orientation the file of the oriented rows, byte for byte (odd and even sides, grey, both tables)', async () => {
    const image = await smallPhoto();
    const cases: [RgbaImage, boolean][] = [
      [cropImage(image, 0, 0, 300, 200), false],
      [cropImage(image, 3, 5, 37, 23), false],
      [cropImage(image, 0, 0, 17, 16), false],
      [pattern(1, 1, false), false],
      [pattern(2, 3, false), false],
      [pattern(33, 18, false), false],
      [pattern(21, 9, true), true],
    ];
    for (const [picture, grey] of cases) {
      for (const optimizeHuffman of [true, false]) {
        for (let orientation = 2; orientation <= 8; orientation++) {
          const what = `${picture.width}x${picture.height} grey ${grey} optimised ${optimizeHuffman} orientation ${orientation}`;
          // Bands of odd heights: the encoder pairs rows across them.
          const placed = await encodeJpeg(source(picture, 7, grey), { quality: 85, optimizeHuffman, orientation });
          const oriented = await encodeJpeg(source(applyOrientation(picture, orientation), 16, grey), { quality: 85, optimizeHuffman });
          expect(sameBytes(placed, oriented), what).toBe(true);
        }
      }
    }
  });

  it('holds the result as YCbCr planes, half an RGB frame: a rotated 12 MP photo within its plan', async () => {
    const image = await decode(await corpus('photos/photo-12mp.jpg'));
    const stats = {} as JpegEncodeStats;
    const rotated = await encodeJpeg(source(image), { quality: 80, optimizeHuffman: false, orientation: 6 }, stats);
    expect(sameBytes(rotated, await encodeJpeg(source(applyOrientation(image, 6)), { quality: 80, optimizeHuffman: false }))).toBe(true);
    const planned = jpegEncodeWasmBytes(3000, 4000, 3, false, undefined, 6);
    expect(stats.wasmBytes).toBeLessThanOrEqual(planned);
    // 1.5 bytes a pixel and libjpeg's few rows: 17.2 MiB, where a frame of the rotated RGB rows takes 34.3.
    expect(planned / 2 ** 20).toBeLessThan(19);
  }, 60_000);
});

describe('jpegEncoder (RowEncoder)', () => {
  it('encodes like sharp\'s default, and places any orientation', async () => {
    const image = await smallPhoto();
    expect(jpegEncoder.placesOrientation).toBe(true);
    const bytes = await encodeToBytes(jpegEncoder, source(image), { quality: 80, orientation: 1 });
    expect(sameBytes(bytes, await referenceJpegEncode(image, 80))).toBe(true);
    const rotated = await encodeToBytes(jpegEncoder, source(image), { quality: 80, orientation: 6 });
    expect(sameBytes(rotated, await referenceJpegEncode(applyOrientation(image, 6), 80))).toBe(true);
  });
});
