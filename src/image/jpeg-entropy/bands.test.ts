import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RgbaImage } from '../types';
import { planJpegBands, type JpegBandPlan } from './bands';
import { readJpegHeader } from './header';
import { DC, EVERY_DC_CATEGORY, type HuffmanSpec } from './huffman';
import { scanLayout } from './scan';
import { BASELINE, corpus, decodeBands, decodeRgba, encodeJpeg, fixture, mutated, picture, sameBytes, SUBSAMPLING } from './test-codecs';
import { withDeepDcTable, withRestartMarkers } from './test-rewrite-scan';

const ORIENTATION = ['landscape', 'portrait'].flatMap((kind) => [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `jpeg/orientation/${kind}_${n}.jpg`));
const CAMERA = ['BlueSquare', 'Canon_40D', 'DSCN0010', 'DSCN0021', 'Nikon_D70', 'Pentax_K10D', 'Sony_HDR-HC3', 'long_description'].map((n) => `jpeg/camera/${n}.jpg`);
const BAD_EXIF = ['image00971', 'image01088', 'image01137', 'image01551'].map((n) => `jpeg/bad-exif/${n}.jpg`);
/** Every baseline corpus JPEG but the damaged one (jpeg/bad-exif/corrupted.jpg, tested below). */
const BANDABLE = ['photos/photo-1mp.jpg', ...ORIENTATION, ...CAMERA, ...BAD_EXIF];

function iMcuHeight(bytes: Uint8Array): number {
  return scanLayout(readJpegHeader(bytes)!)!.imcuHeight;
}

/** Band budgets for a file: one iMCU row per band, about three rows of context and payload, and half the image. */
function budgets(bytes: Uint8Array): number[] {
  const { width, height } = readJpegHeader(bytes)!;
  const rows = iMcuHeight(bytes);
  return [1, width * rows * 4, Math.ceil((width * height) / 2)];
}

/**
 * Grey at the top to white at the bottom, with a little noise: small DC differences (small
 * categories), while a band starting lower down codes a large DC value (a large category).
 */
function greyToWhite(width: number, height: number): RgbaImage {
  const image = picture(width, height);
  for (let i = 0; i < image.data.length; i++) {
    const y = Math.floor(i / 4 / width);
    image.data[i] = i % 4 === 3 ? 255 : 128 + Math.round((120 * y) / height) + (image.data[i] & 3);
  }
  return image;
}

/** The longest code length of a table. */
function longest(spec: HuffmanSpec): number {
  let length = 16;
  while (spec.counts[length] === 0) length--;
  return length;
}

function plan(bytes: Uint8Array, maxBandPixels: number): JpegBandPlan {
  const result = planJpegBands(bytes, maxBandPixels);
  if (!result) throw new Error('planJpegBands returned null');
  return result;
}

/** Bands decode, stacked, to exactly the whole file's decode. */
async function expectBandsDecodeAsWhole(bytes: Uint8Array, maxBandPixels: number, what: string): Promise<JpegBandPlan> {
  const bands = plan(bytes, maxBandPixels);
  const whole = await decodeRgba(bytes);
  expect([bands.width, bands.height], what).toEqual([whole.width, whole.height]);
  const stacked = await decodeBands(bands);
  const firstDifference = stacked.data.findIndex((v, i) => v !== whole.data[i]);
  expect(firstDifference, `${what}: ${bands.bands.length} bands; first difference in row ${Math.floor(firstDifference / 4 / whole.width)}`).toBe(-1);
  return bands;
}

describe('planJpegBands: bands decode to exactly the whole image (mozjpeg)', () => {
  it('for every baseline corpus JPEG, at several band sizes', async () => {
    for (const path of BANDABLE) {
      const bytes = await corpus(path);
      for (const budget of budgets(bytes)) await expectBandsDecodeAsWhole(bytes, budget, `${path} at ${budget} pixels`);
    }
  }, 120_000);

  it('for synthetic 4:2:0, 4:4:4, greyscale and RGB (Adobe APP14) files of odd sizes', async () => {
    const sizes = [
      [1, 1],
      [17, 33],
      [1000, 7],
      [7, 300],
      [333, 257],
    ];
    for (const [name, options] of Object.entries(SUBSAMPLING)) {
      for (const [width, height] of sizes) {
        const bytes = await encodeJpeg(picture(width, height), { ...BASELINE, ...options });
        for (const budget of budgets(bytes)) await expectBandsDecodeAsWhole(bytes, budget, `${name} ${width}x${height} at ${budget} pixels`);
      }
    }
  }, 120_000);

  it('for 4:2:2 camera files and an interval of restart markers (BlueSquare: 4:2:0, every 23 MCUs)', async () => {
    for (const path of ['jpeg/camera/DSCN0010.jpg', 'jpeg/camera/BlueSquare.jpg']) {
      const bytes = await corpus(path);
      expect(readJpegHeader(bytes)!.restartInterval, path).toBe(path.includes('Blue') ? 23 : 0);
      await expectBandsDecodeAsWhole(bytes, 1, path);
    }
  });

  it('for restart markers every 1, 7, 75 (one MCU row), 76 and 1000 MCUs', async () => {
    const photo = await corpus('photos/photo-1mp.jpg'); // 1200x800 4:2:0: 75 MCUs a row
    const grey = await encodeJpeg(picture(203, 97), { ...BASELINE, ...SUBSAMPLING.grey });
    const full = await encodeJpeg(picture(203, 97), { ...BASELINE, ...SUBSAMPLING['4:4:4'] });
    for (const interval of [1, 7, 75, 76, 1000]) {
      for (const [name, bytes] of Object.entries({ photo, grey, full })) {
        const restarted = withRestartMarkers(bytes, interval);
        expect(readJpegHeader(restarted)!.restartInterval).toBe(interval);
        // The copy decodes as the original: the restart markers themselves are right.
        expect(sameBytes((await decodeRgba(restarted)).data, (await decodeRgba(bytes)).data)).toBe(true);
        for (const budget of budgets(restarted)) await expectBandsDecodeAsWhole(restarted, budget, `${name}, restart every ${interval}, ${budget} pixels`);
      }
    }
  }, 120_000);

  it('for every mutation of a file that it accepts', async () => {
    const bytes = await encodeJpeg(picture(40, 40), { ...BASELINE, ...SUBSAMPLING['4:2:0'] });
    const restarted = withRestartMarkers(bytes, 3);
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated(bytes, 700), mutated(restarted, 700)), async (input) => {
        const bands = planJpegBands(input, 1);
        if (!bands) return;
        accepted++;
        const whole = await decodeRgba(input);
        expect(sameBytes((await decodeBands(bands)).data, whole.data)).toBe(true);
      }),
      { numRuns: 150 },
    );
    expect(accepted).toBeGreaterThan(10);
  }, 120_000);
});

describe('planJpegBands: the bands', () => {
  it('cover the image in order, with one iMCU row of context where chroma is subsampled vertically', async () => {
    const cases = {
      '4:2:0': await corpus('photos/photo-1mp.jpg'),
      '4:2:2': await corpus('jpeg/camera/DSCN0010.jpg'),
      '4:4:4': await corpus('jpeg/orientation/landscape_1.jpg'),
      grey: await encodeJpeg(picture(300, 200), { ...BASELINE, ...SUBSAMPLING.grey }),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const { width, height } = readJpegHeader(bytes)!;
      const rows = iMcuHeight(bytes);
      const context = name === '4:2:0' ? rows : 0;
      for (const budget of [1, width * rows * 5, width * rows * 12]) {
        const { bands } = plan(bytes, budget);
        let y = 0;
        for (const [i, band] of bands.entries()) {
          expect(band.y, `${name} band ${i}`).toBe(y);
          expect(band.rows).toBeGreaterThan(0);
          expect(band.y % rows).toBe(0);
          expect(band.skipRows).toBe(i === 0 ? 0 : context);
          const below = i === bands.length - 1 ? 0 : context;
          const decodedRows = band.skipRows + band.rows + below;
          // Within the budget (when it allows a row of payload and its context), else one row of payload.
          if (budget >= width * rows * 3) expect(width * decodedRows).toBeLessThanOrEqual(budget);
          else expect(band.rows).toBe(Math.min(rows, height - band.y));
          const header = readJpegHeader(band.jpeg())!;
          expect([header.width, header.height]).toEqual([width, decodedRows]);
          expect(header.restartInterval).toBe(0);
          y += band.rows;
        }
        expect(y).toBe(height);
      }
    }
  });

  it('code their first MCU again and copy the rest, adding the DC codes the original table lacks', async () => {
    const bytes = await encodeJpeg(greyToWhite(64, 256), { ...BASELINE, ...SUBSAMPLING['4:2:0'] });
    const original = readJpegHeader(bytes)!.huffman[DC][0]!;
    const bands = await expectBandsDecodeAsWhole(bytes, 1, 'grey to white 64x256');
    const table = readJpegHeader(bands.bands.at(-1)!.jpeg())!.huffman[DC][0]!;
    expect(table.symbols.length).toBeGreaterThan(original.symbols.length);
    expect([...table.symbols.subarray(0, original.symbols.length)]).toEqual([...original.symbols]);
    expect([...table.counts].slice(0, longest(original) + 1)).toEqual([...original.counts].slice(0, longest(original) + 1));
  });

  it('code every block again when the DC table has no room for more codes', async () => {
    const bytes = withDeepDcTable(await encodeJpeg(greyToWhite(64, 256), { ...BASELINE, ...SUBSAMPLING['4:2:0'] }));
    expect(longest(readJpegHeader(bytes)!.huffman[DC][0]!)).toBe(16);
    const bands = await expectBandsDecodeAsWhole(bytes, 1, 'grey to white 64x256, deep DC table');
    expect(readJpegHeader(bands.bands.at(-1)!.jpeg())!.huffman[DC][0]).toEqual(EVERY_DC_CATEGORY);
  });

  it('are the file itself when one band holds the whole image', async () => {
    const bytes = await corpus('jpeg/camera/Canon_40D.jpg');
    const { bands } = plan(bytes, 100 * 68);
    expect(bands).toHaveLength(1);
    expect(bands[0]).toMatchObject({ y: 0, rows: 68, skipRows: 0 });
    expect(bands[0].jpeg()).toBe(bytes);
  });

  it('keep the JFIF and Adobe segments that choose the colour transform, and no others', async () => {
    const rgb = await encodeJpeg(picture(64, 64), { ...BASELINE, ...SUBSAMPLING.rgb });
    expect(readJpegHeader(rgb)!.adobe).not.toBeNull();
    const band = readJpegHeader(plan(rgb, 1).bands[1].jpeg())!;
    expect(band.adobe).not.toBeNull();
    expect(band.jfif).toBeNull();
    const exif = await corpus('jpeg/orientation/landscape_6.jpg'); // JFIF, ICC and EXIF segments
    const markers = readJpegHeader(plan(exif, 1).bands[1].jpeg())!.segments.map((s) => s.marker.toString(16));
    expect(markers).toEqual(['e0', 'db', 'c0', 'c4', 'da']);
  });
});

describe('planJpegBands: null for what it cannot band', () => {
  const sofAt = (bytes: Uint8Array, marker: number) => readJpegHeader(bytes)!.segments.find((s) => s.marker === marker)!.start;

  it('progressive, 4-component and multi-scan files', async () => {
    expect(planJpegBands(await corpus('avif/fox.jpg'), 1)).toBeNull(); // progressive
    for (const name of ['cmyk-adobe.jpg', 'cmyk-progressive.jpg', 'ycck-420.jpg']) {
      expect(planJpegBands(await fixture(`cmyk/${name}`), 1), name).toBeNull();
    }
    const progressive = await encodeJpeg(picture(64, 64), { ...BASELINE, baseline: false, progressive: true });
    expect(planJpegBands(progressive, 1)).toBeNull();
  });

  it('other frame types, 12-bit samples, zero height (DNL)', async () => {
    const bytes = await encodeJpeg(picture(32, 32), BASELINE);
    const sof = sofAt(bytes, 0xc0);
    const changed = (at: number, value: number) => Object.assign(bytes.slice(), { [at]: value });
    expect(planJpegBands(bytes, 1)).not.toBeNull();
    for (const marker of [0xc2, 0xc3, 0xc5, 0xc9, 0xca, 0xcb]) expect(planJpegBands(changed(sof + 1, marker), 1), marker.toString(16)).toBeNull();
    expect(planJpegBands(changed(sof + 1, 0xc1), 1)).not.toBeNull(); // extended sequential, Huffman
    expect(planJpegBands(changed(sof + 4, 12), 1)).toBeNull();
    expect(planJpegBands(Object.assign(bytes.slice(), { [sof + 5]: 0, [sof + 6]: 0 }), 1)).toBeNull();
  });

  it('damaged scan data: cut short, a stray marker, a bad Huffman code, restart markers out of order', async () => {
    const bytes = await corpus('jpeg/orientation/portrait_3.jpg');
    const { dataStart } = readJpegHeader(bytes)!;
    const middle = dataStart + Math.floor((bytes.length - dataStart) / 2);
    const cut = new Uint8Array([...bytes.subarray(0, middle), 0xff, 0xd9]);
    expect(planJpegBands(cut, 1)).toBeNull();
    expect(planJpegBands(bytes.subarray(0, bytes.length - 2), 1)).toBeNull(); // no EOI
    const stray = Object.assign(bytes.slice(), { [middle]: 0xff, [middle + 1]: 0xd3 });
    expect(planJpegBands(stray, 1)).toBeNull();
    // 16 one bits: no code (the all-ones code is reserved), wherever they land.
    const ones = bytes.slice();
    ones.set([0xff, 0x00, 0xff, 0x00, 0xff, 0x00], middle);
    expect(planJpegBands(ones, 1)).toBeNull();
    expect(planJpegBands(await corpus('jpeg/bad-exif/corrupted.jpg'), 1)).toBeNull(); // a run of 0xFF in its data

    const restarted = await corpus('jpeg/camera/BlueSquare.jpg');
    const rst = restarted.findIndex((v, i) => i > readJpegHeader(restarted)!.dataStart && v === 0xff && restarted[i + 1] === 0xd0);
    expect(planJpegBands(Object.assign(restarted.slice(), { [rst + 1]: 0xd1 }), 1)).toBeNull();
  });

  it('never throws, for any mutation of a header or scan', async () => {
    const seeds = [await corpus('jpeg/camera/BlueSquare.jpg'), await encodeJpeg(picture(50, 30), { ...BASELINE, ...SUBSAMPLING.grey })];
    fc.assert(
      fc.property(fc.oneof(...seeds.map((s) => mutated(s, 1024))), (input) => {
        const result = planJpegBands(input, 2000);
        for (const band of result?.bands ?? []) band.jpeg();
      }),
      { numRuns: 300 },
    );
  });
});
