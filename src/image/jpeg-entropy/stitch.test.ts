import { describe, expect, it } from 'vitest';
import type { RgbaImage } from '../types';
import { planJpegBands } from './bands';
import { BlockReader } from './block-reader';
import { readJpegHeader } from './header';
import { firstMcuOfImcuRow, scanDecodeTables, scanLayout } from './scan';
import { stitchJpegBands } from './stitch';
import { BASELINE, corpus, decodeRgba, encodeJpeg, picture, rowsOf, sameBytes, SUBSAMPLING } from './test-codecs';

/** Encodes `image` in bands of `bandRows` rows (the last takes what is left). */
async function encodeInBands(image: RgbaImage, bandRows: number, options: object): Promise<Uint8Array[]> {
  const bands: Uint8Array[] = [];
  for (let y = 0; y < image.height; y += bandRows) bands.push(await encodeJpeg(rowsOf(image, y, Math.min(bandRows, image.height - y)), { ...BASELINE, ...options }));
  return bands;
}

/** The band encodes' decodes, stacked. */
async function decodeStacked(bands: Uint8Array[]): Promise<RgbaImage> {
  const images = await Promise.all(bands.map(decodeRgba));
  const height = images.reduce((sum, image) => sum + image.height, 0);
  const data = new Uint8Array(images[0].width * height * 4);
  let at = 0;
  for (const image of images) {
    data.set(image.data, at);
    at += image.data.length;
  }
  return { data, width: images[0].width, height };
}

/** Rows where two decodes differ. */
function differingRows(a: RgbaImage, b: RgbaImage): number[] {
  const rows = new Set<number>();
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) rows.add(Math.floor(i / 4 / a.width));
  return [...rows];
}

/**
 * The coefficients of every block in scan order, as Huffman symbols: the absolute DC value, then
 * each AC symbol with its additional bits. Equal for two files means equal quantised coefficients.
 */
function coefficients(jpegs: Uint8Array[]): Int32Array {
  const out: number[] = [];
  for (const jpeg of jpegs) {
    const header = readJpegHeader(jpeg)!;
    const layout = scanLayout(header)!;
    const tables = scanDecodeTables(header)!;
    const reader = new BlockReader(jpeg, header.dataStart);
    const dc = new Int32Array(3);
    for (let mcu = 0; mcu < firstMcuOfImcuRow(layout, layout.imcuRows); mcu++) {
      for (const c of layout.blockComponents) {
        dc[c] += reader.dc(tables.dc[c]);
        out.push(dc[c]);
        for (let k = 1; k < 64; ) {
          const symbol = reader.symbol(tables.ac[c]);
          const size = symbol & 15;
          out.push((symbol << 16) | reader.bits(size));
          if (symbol === 0) break;
          k += size === 0 ? 16 : (symbol >> 4) + 1;
        }
      }
    }
  }
  return Int32Array.from(out);
}

describe('stitchJpegBands', () => {
  it('gives one mozjpeg encode back byte for byte (its tables are libjpeg optimal tables)', async () => {
    for (const [name, options] of Object.entries(SUBSAMPLING)) {
      for (const [width, height] of [
        [1, 1],
        [33, 17],
        [640, 480],
      ]) {
        const jpeg = await encodeJpeg(picture(width, height), { ...BASELINE, ...options });
        expect(sameBytes(stitchJpegBands([jpeg]), jpeg), `${name} ${width}x${height}`).toBe(true);
      }
    }
  });

  it('joins band encodes into one baseline JPEG, coefficient for coefficient, about the size of a whole encode', async () => {
    const photo = await decodeRgba(await corpus('photos/photo-1mp.jpg')); // 1200x800
    const odd = picture(333, 257);
    const cases: [string, RgbaImage, object, number[]][] = [
      ['photo, the pipeline\'s settings (4:2:2 here)', photo, {}, [160, 336]],
      ['photo 4:2:0', photo, SUBSAMPLING['4:2:0'], [160, 336]],
      ['photo 4:4:4', photo, SUBSAMPLING['4:4:4'], [200, 296]],
      ['photo grey', photo, SUBSAMPLING.grey, [200]],
      ['photo RGB', photo, SUBSAMPLING.rgb, [304]],
      ['333x257 4:2:0', odd, SUBSAMPLING['4:2:0'], [64]],
    ];
    for (const [name, image, options, bandHeights] of cases) {
      const whole = await encodeJpeg(image, { ...BASELINE, ...options });
      for (const bandRows of bandHeights) {
        const bands = await encodeInBands(image, bandRows, options);
        const stitched = stitchJpegBands(bands);
        const what = `${name} in ${bands.length} bands of ${bandRows} rows: ${stitched.length} bytes, whole encode ${whole.length}`;
        const header = readJpegHeader(stitched)!;
        expect([header.width, header.height, header.sofMarker, header.restartInterval], what).toEqual([image.width, image.height, 0xc0, 0]);
        expect(sameBytes(coefficients([stitched]), coefficients(bands)), what).toBe(true);
        expect(Math.abs(stitched.length / whole.length - 1), what).toBeLessThan(0.01);
        expect(planJpegBands(stitched, 1), what).not.toBeNull(); // a file the band planner takes

        // Pixels: the stacked band decodes, but where chroma is subsampled vertically libjpeg's
        // upsampling now blends the chroma rows on either side of a seam, as in any whole image.
        const seams = bands.slice(0, -1).map((_, i) => (i + 1) * bandRows);
        const blended = scanLayout(header)!.verticallySubsampled ? seams.flatMap((y) => [y - 1, y]) : [];
        const rows = differingRows(await decodeRgba(stitched), await decodeStacked(bands));
        expect(rows.every((y) => blended.includes(y)), `${what}: rows ${rows.join()} differ`).toBe(true);
      }
    }
  }, 120_000);

  it('joins bands of one MCU row each', async () => {
    const image = picture(97, 75);
    for (const [options, rows] of [
      [SUBSAMPLING['4:2:0'], 16],
      [SUBSAMPLING['4:4:4'], 8],
      [SUBSAMPLING.grey, 8],
    ] as const) {
      const bands = await encodeInBands(image, rows, options);
      const stitched = stitchJpegBands(bands);
      expect(sameBytes(coefficients([stitched]), coefficients(bands))).toBe(true);
      const decoded = await decodeRgba(stitched);
      expect([decoded.width, decoded.height]).toEqual([97, 75]);
    }
  });

  it('throws for bands it did not expect', async () => {
    const image = picture(64, 48);
    const top = rowsOf(image, 0, 32);
    const bottom = rowsOf(image, 32, 16);
    const band = (part: RgbaImage, options: object = {}) => encodeJpeg(part, { ...BASELINE, ...options });
    expect(() => stitchJpegBands([])).toThrow(/no bands/);
    expect(stitchJpegBands([await band(top), await band(bottom)]).length).toBeGreaterThan(0);
    await expect(async () => stitchJpegBands([await band(top), await band(bottom, { quality: 50 })])).rejects.toThrow(/other settings/);
    await expect(async () => stitchJpegBands([await band(top), await band(rowsOf(picture(48, 16), 0, 16))])).rejects.toThrow(/other settings/);
    await expect(async () => stitchJpegBands([await band(top), await band(bottom, SUBSAMPLING['4:4:4'])])).rejects.toThrow(/other settings/);
    const split = async (rows: number) => [await band(rowsOf(image, 0, rows), SUBSAMPLING['4:2:0']), await band(rowsOf(image, rows, 48 - rows), SUBSAMPLING['4:2:0'])];
    expect(stitchJpegBands(await split(16)).length).toBeGreaterThan(0);
    await expect(async () => stitchJpegBands(await split(24))).rejects.toThrow(/multiple/);
    await expect(async () => stitchJpegBands([await band(top, { baseline: false, progressive: true }), await band(bottom)])).rejects.toThrow(/sequential/);
    const good = await band(top);
    await expect(async () => stitchJpegBands([good.subarray(0, good.length - 200)])).rejects.toThrow(/ends early|after its scan/);
  });
});
