import { describe, expect, it } from 'vitest';
import { corpus, fixture, JPEGS, maxDifference, referenceRawDecode } from '../../../../test/support/image-testing';
import { readJpegHeader } from './header';
import type { Region } from '../../operations';
import { type Band } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { openDecode } from '../../../../test/support/formats';
import { collectFrame } from '../../../../test/support/row-sources';

/** test/fixtures/jpeg (make-jpeg-fixtures.ts): 203x157, written by cjpeg of the same libjpeg-turbo version. */
const STRUCTURES: Record<string, { sampling: string; progressive: boolean; multiScan: boolean }> = {
  's444.jpg': { sampling: '1x1 1x1 1x1', progressive: false, multiScan: false },
  's422.jpg': { sampling: '2x1 1x1 1x1', progressive: false, multiScan: false },
  's440.jpg': { sampling: '1x2 1x1 1x1', progressive: false, multiScan: false },
  's420.jpg': { sampling: '2x2 1x1 1x1', progressive: false, multiScan: false },
  's411.jpg': { sampling: '4x1 1x1 1x1', progressive: false, multiScan: false },
  'grey.jpg': { sampling: '1x1', progressive: false, multiScan: false },
  'restart-rows-420.jpg': { sampling: '2x2 1x1 1x1', progressive: false, multiScan: false },
  'restart-mcus-422.jpg': { sampling: '2x1 1x1 1x1', progressive: false, multiScan: false },
  'progressive-420.jpg': { sampling: '2x2 1x1 1x1', progressive: true, multiScan: true },
  'progressive-444.jpg': { sampling: '1x1 1x1 1x1', progressive: true, multiScan: true },
  'progressive-grey.jpg': { sampling: '1x1', progressive: true, multiScan: true },
  'multiscan-420.jpg': { sampling: '2x2 1x1 1x1', progressive: false, multiScan: true },
};
const STRUCTURE_SIZE = { width: 203, height: 157 };
const CMYK_FIXTURES = ['cmyk-adobe.jpg', 'cmyk-noprofile.jpg', 'cmyk-progressive.jpg', 'ycck-adobe.jpg', 'ycck-420.jpg'];
/** The corpus file with a damaged body; every other corpus JPEG is intact. */
const DAMAGED_CORPUS = 'jpeg/bad-exif/corrupted.jpg';

async function decode(bytes: Uint8Array, shrink = 1, region: Region | null = null): Promise<RgbaImage & { bands: Band[] }> {
  const source = await openDecode(bytes, { shrink, region });
  const bands: Band[] = [];
  const read = source.read.bind(source);
  source.read = async () => {
    const band = await read();
    if (band) bands.push({ y: band.y, rows: band.rows, data: band.data.slice(0, 0) });
    return band;
  };
  const image = await collectFrame(source);
  return { ...image, bands };
}

function cropOf(image: RgbaImage, { x, y, width, height }: Region): Uint8Array {
  const out = new Uint8Array(width * height * 4);
  for (let row = 0; row < height; row++) {
    const from = ((y + row) * image.width + x) * 4;
    out.set(image.data.subarray(from, from + width * 4), row * width * 4);
  }
  return out;
}

/** Windows at the image's edges, on and off iMCU boundaries (8/16/32), 1-pixel rows and columns, odd offsets. */
function windows(width: number, height: number): Region[] {
  const all: Region[] = [
    { x: 0, y: 0, width, height },
    { x: 0, y: 0, width: 1, height: 1 },
    { x: 1, y: 1, width: 5, height: 3 },
    { x: 7, y: 9, width: 2, height: 2 },
    { x: 15, y: 15, width: 2, height: 2 },
    { x: 16, y: 16, width: 16, height: 16 },
    { x: 17, y: 33, width: 64, height: 47 },
    { x: 31, y: 47, width: 101, height: 99 },
    { x: 33, y: 31, width: width - 33, height: height - 31 },
    { x: width - 7, y: height - 5, width: 7, height: 5 },
    { x: width - 1, y: 0, width: 1, height },
    { x: 0, y: height - 1, width, height: 1 },
    { x: 0, y: 40, width: 40, height: height - 40 },
    { x: 100, y: 0, width: 3, height: 64 },
  ];
  return all.filter((r) => r.x >= 0 && r.y >= 0 && r.width >= 1 && r.height >= 1 && r.x + r.width <= width && r.y + r.height <= height);
}

describe('jpegDecoder against libjpeg-turbo in sharp (the same decode: ISLOW IDCT, fancy upsampling)', () => {
  it('decodes every intact corpus JPEG to exactly the same pixels', async () => {
    for (const path of Object.keys(JPEGS).filter((path) => path !== DAMAGED_CORPUS)) {
      const bytes = await corpus(path);
      const ours = await decode(bytes);
      const reference = await referenceRawDecode(bytes);
      expect({ path, width: ours.width, height: ours.height }).toEqual({ path, width: reference.width, height: reference.height });
      expect(maxDifference(ours.data, reference.data), path).toBe(0);
    }
  }, 300_000);

  it('decodes every subsampling, restart markers, progressive and multi-scan files to exactly the same pixels', async () => {
    for (const [name, expected] of Object.entries(STRUCTURES)) {
      const bytes = await fixture(`jpeg/${name}`);
      const frame = readJpegHeader(bytes).frame;
      expect({ name, sampling: frame.sampling.map(({ h, v }) => `${h}x${v}`).join(' '), progressive: frame.progressive, multiScan: frame.multiScan }).toEqual({ name, ...expected });
      const ours = await decode(bytes);
      const reference = await referenceRawDecode(bytes);
      expect({ name, width: ours.width, height: ours.height }).toEqual({ name, ...STRUCTURE_SIZE });
      expect(maxDifference(ours.data, reference.data), name).toBe(0);
    }
  });

  it('hands out consecutive bands of at most 16 rows that cover the image once', async () => {
    for (const name of Object.keys(STRUCTURES)) {
      const { bands, height } = await decode(await fixture(`jpeg/${name}`));
      let y = 0;
      for (const band of bands) {
        expect({ name, y: band.y }).toEqual({ name, y });
        expect(band.rows).toBeGreaterThan(0);
        expect(band.rows).toBeLessThanOrEqual(16);
        y += band.rows;
      }
      expect(y, name).toBe(height);
    }
  });

  it('counts its WebAssembly memory until the last band was read or it is closed, and holds no JavaScript buffers', async () => {
    const bytes = await fixture('jpeg/progressive-420.jpg');
    const before = liveCodecMemoryBytes();
    const source = await openDecode(bytes, { shrink: 1, region: null });
    expect(liveCodecMemoryBytes() - before).toBe(1024 * 1024);
    expect(source.heldBytes()).toBe(0);
    while (await source.read());
    expect(liveCodecMemoryBytes()).toBe(before);
    const closedEarly = await openDecode(bytes, { shrink: 1, region: null });
    await closedEarly.read();
    closedEarly.close();
    closedEarly.close();
    expect(liveCodecMemoryBytes()).toBe(before);
    expect(await closedEarly.read()).toBe(null);
  });

  it('says what the bands hold: grey for one component, cmyk for four, never alpha', async () => {
    const traits = async (bytes: Uint8Array) => {
      const source = await openDecode(bytes, { shrink: 1, region: null });
      source.close();
      return { model: source.model, grey: source.grey, alpha: source.alpha };
    };
    expect(await traits(await fixture('jpeg/grey.jpg'))).toEqual({ model: 'rgba', grey: true, alpha: false });
    expect(await traits(await fixture('jpeg/s420.jpg'))).toEqual({ model: 'rgba', grey: false, alpha: false });
    expect(await traits(await fixture('cmyk/ycck-420.jpg'))).toEqual({ model: 'cmyk', grey: false, alpha: false });
  });
});

describe('jpegDecoder: a window of the image', () => {
  it('gives exactly the pixels of the same region of a whole decode, for every subsampling', async () => {
    for (const name of [...Object.keys(STRUCTURES).map((name) => `jpeg/${name}`), 'cmyk/ycck-420.jpg', 'cmyk/cmyk-progressive.jpg']) {
      const bytes = await fixture(name);
      const whole = await decode(bytes);
      for (const region of windows(whole.width, whole.height)) {
        const window = await decode(bytes, 1, region);
        expect({ name, region, width: window.width, height: window.height }).toEqual({ name, region, width: region.width, height: region.height });
        expect(maxDifference(window.data, cropOf(whole, region)), `${name} ${JSON.stringify(region)}`).toBe(0);
      }
    }
  }, 120_000);

  it('crops the 12 MP photo exactly, at even and odd offsets', async () => {
    const bytes = await corpus('photos/photo-12mp.jpg');
    const whole = await decode(bytes);
    for (const region of [
      { x: 1000, y: 1000, width: 2000, height: 2000 },
      { x: 1001, y: 999, width: 1999, height: 2001 },
      { x: 3999, y: 2999, width: 1, height: 1 },
      { x: 0, y: 2984, width: 4000, height: 16 },
    ]) {
      expect(maxDifference((await decode(bytes, 1, region)).data, cropOf(whole, region)), JSON.stringify(region)).toBe(0);
    }
  }, 120_000);

  it('gives at a shrink exactly the pixels of the same region of the scaled decode, for every subsampling', async () => {
    for (const name of [...Object.keys(STRUCTURES).map((name) => `jpeg/${name}`), 'cmyk/ycck-420.jpg']) {
      const bytes = await fixture(name);
      for (const shrink of [2, 4]) {
        const whole = await decode(bytes, shrink);
        for (const region of windows(whole.width, whole.height)) {
          const window = await decode(bytes, shrink, region);
          expect(maxDifference(window.data, cropOf(whole, region)), `${name} 1/${shrink} ${JSON.stringify(region)}`).toBe(0);
        }
      }
    }
  }, 120_000);

  it('refuses windows outside the image, at its size at the shrink', async () => {
    const bytes = await fixture('jpeg/s420.jpg');
    await expect(openDecode(bytes, { shrink: 1, region: { x: 200, y: 0, width: 4, height: 1 } })).rejects.toThrow(/outside/);
    const { width } = await decode(bytes, 2);
    await expect(openDecode(bytes, { shrink: 2, region: { x: width - 3, y: 0, width: 4, height: 1 } })).rejects.toThrow(/outside/);
    await expect(openDecode(bytes, { shrink: 3, region: null })).rejects.toThrow(/shrink 3/);
  });
});

/** The mean of each shrink x shrink box (smaller at the right and bottom edges), as the reference for a scaled decode. */
function boxAverage(image: RgbaImage, shrink: number): Uint8Array {
  const width = Math.ceil(image.width / shrink);
  const height = Math.ceil(image.height / shrink);
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sums = [0, 0, 0, 0];
      let count = 0;
      for (let yy = y * shrink; yy < Math.min(image.height, (y + 1) * shrink); yy++) {
        for (let xx = x * shrink; xx < Math.min(image.width, (x + 1) * shrink); xx++) {
          const i = (yy * image.width + xx) * 4;
          for (let c = 0; c < 4; c++) sums[c] += image.data[i + c];
          count++;
        }
      }
      for (let c = 0; c < 4; c++) out[(y * width + x) * 4 + c] = Math.round(sums[c] / count);
    }
  }
  return out;
}

function psnrRgb(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let squared = 0;
  let samples = 0;
  for (let i = 0; i < a.length; i += 4) {
    for (let c = 0; c < 3; c++) squared += (a[i + c] - b[i + c]) ** 2;
    samples += 3;
  }
  return 10 * Math.log10((255 * 255) / (squared / samples));
}

describe('jpegDecoder: shrink-on-load (DCT scaling)', () => {
  it('decodes at ceil(side / shrink) for every structure', async () => {
    for (const name of Object.keys(STRUCTURES)) {
      for (const shrink of [2, 4, 8]) {
        const image = await decode(await fixture(`jpeg/${name}`), shrink);
        expect({ name, shrink, width: image.width, height: image.height }).toEqual({ name, shrink, width: Math.ceil(203 / shrink), height: Math.ceil(157 / shrink) });
      }
    }
  });

  it('gives the 12 MP photo at 1/2, 1/4 and 1/8 close to a box average of the whole decode', async () => {
    const bytes = await corpus('photos/photo-12mp.jpg');
    const whole = await decode(bytes);
    const measured: Record<number, number> = {};
    for (const shrink of [2, 4, 8]) {
      const scaled = await decode(bytes, shrink);
      expect({ width: scaled.width, height: scaled.height }).toEqual({ width: 4000 / shrink, height: 3000 / shrink });
      measured[shrink] = Math.round(psnrRgb(scaled.data, boxAverage(whole, shrink)) * 10) / 10;
    }
    console.log('12 MP scaled decode against a box average of the whole decode, PSNR dB:', measured);
    // Measured: 1/2 46.4 dB, 1/4 49.6 dB, 1/8 51.4 dB.
    for (const shrink of [2, 4, 8]) expect(measured[shrink], `1/${shrink}`).toBeGreaterThan(45);
  }, 120_000);
});

describe('jpegDecoder: CMYK and YCCK', () => {
  it.each(CMYK_FIXTURES)('%s decodes to the inks libjpeg gives in sharp, exactly', async (name) => {
    const bytes = await fixture(`cmyk/${name}`);
    const ours = await decode(bytes);
    const reference = await referenceRawDecode(bytes);
    expect(reference.model).toBe('cmyk');
    expect(maxDifference(ours.data, reference.data)).toBe(0);
  });

  it('reads a 4-component JPEG without its Adobe marker as Adobe-inverted, like one with it', async () => {
    const bytes = await fixture('cmyk/cmyk-noprofile.jpg');
    const at = bytes.findIndex((b, i) => b === 0xff && bytes[i + 1] === 0xee);
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    const stripped = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 2 + length)]);
    expect(readJpegHeader(stripped).frame.adobeTransform).toBe(null);
    expect(maxDifference((await decode(stripped)).data, (await decode(bytes)).data)).toBe(0);
  });
});
