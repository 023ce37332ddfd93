import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors';
import { av01Item, av1ItemOf, buildAvif, gridData, ispe, type Av1Item, type ItemSpec } from '../../../../test/support/avif-builder';
import { comparePixels } from '../../../../test/support/compare-pixels';
import { deltaE2000Stats } from '../../../../test/support/delta-e';
import { AVIFS, corpus, expectAppError, fixture, largeInput } from '../../../../test/support/image-testing';
import { referenceDecode } from '../../../../test/workers/images';
import { HEIGHT, syntheticRgb, WIDTH } from '../../../../test/fixtures/synthetic-picture';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { readColourProfile, toSrgb } from '../../stages/colour';
import type { Region } from '../../operations';
import { type RowSource } from '../../stages/rows';
import type { RgbaImage } from '../../types';
import { avifDecodeMemory } from './memory';
import { openDecode, verifiedAvif } from '../../../../test/support/formats';
import { openAvif } from './decode';
import { readAvifHeader } from './header';
import { verifyAv1Sizes } from './verify';
import { collectFrame } from '../../../../test/support/row-sources';

const FOX = 'avif/fox.profile0.8bpc.yuv420.avif';
const FOX_ODD = 'avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif';

async function decode(input: Uint8Array, region: Region | null = null, bandRows?: number): Promise<RgbaImage> {
  const header = readAvifHeader(input);
  verifyAv1Sizes(header); // the container checks the pipeline makes before decoding
  return collectFrame(await openAvif(input, header, { shrink: 1, region }, { bandRows }));
}

/** What a viewer shows: our decode through the pipeline's colour stage (ICC or nclx to sRGB). */
async function decodeToSrgb(input: Uint8Array): Promise<RgbaImage> {
  return toSrgb(await decode(input), await readColourProfile(readAvifHeader(input).colour));
}

function crop(image: RgbaImage, { x, y, width, height }: Region): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let row = 0; row < height; row++) data.set(image.data.subarray(((y + row) * image.width + x) * 4, ((y + row) * image.width + x + width) * 4), row * width * 4);
  return { data, width, height };
}

/** PSNR of R, G, B where the truth's alpha is at least `minAlpha` (colour under low alpha barely shows). */
function colourPsnr(image: RgbaImage, truth: RgbaImage, minAlpha = 0): number {
  let squares = 0;
  let samples = 0;
  for (let i = 0; i < truth.data.length; i += 4) {
    if (truth.data[i + 3] < minAlpha) continue;
    for (let c = 0; c < 3; c++) {
      squares += (image.data[i + c] - truth.data[i + c]) ** 2;
      samples++;
    }
  }
  return squares === 0 ? Infinity : 10 * Math.log10((255 * 255 * samples) / squares);
}

function greyBt601(image: RgbaImage): RgbaImage {
  const data = new Uint8Array(image.data);
  for (let i = 0; i < data.length; i += 4) data[i] = data[i + 1] = data[i + 2] = Math.round(0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2]);
  return { ...image, data };
}

describe('the AVIF band decoder', () => {
  it('decodes every corpus AVIF as the reference decoder does, within 44 dB (bilinear chroma; the reference takes the nearest sample)', { timeout: 120_000 }, async () => {
    const report: string[] = [];
    for (const path of Object.keys(AVIFS)) {
      const input = await corpus(path);
      const ours = await decode(input);
      expect([ours.width, ours.height], path).toEqual(AVIFS[path]);
      // libheif leaves monochrome AVIF in limited range; the grey of the colour encode is the truth there.
      const monochrome = path.includes('monochrome');
      const reference = monochrome ? greyBt601(await referenceDecode(await corpus(FOX))) : await referenceDecode(input);
      const { psnr } = comparePixels(ours, reference);
      report.push(`${path}: ${psnr.toFixed(1)} dB`);
      expect(psnr, path).toBeGreaterThanOrEqual(monochrome ? 35 : 44);
    }
    console.log(`AVIF decoder vs sharp/libheif: ${report.join(', ')}`);
  });

  it('decodes the alpha fixtures as the reference decoder shows them', { timeout: 60_000 }, async () => {
    const report: string[] = [];
    for (const path of ['alpha/alpha-8bit.avif', 'alpha/alpha-10bit.avif', 'alpha/alpha-12bit.avif', 'colour/p3.avif']) {
      const input = await fixture(path);
      const { psnr } = comparePixels(await decodeToSrgb(input), await referenceDecode(input));
      report.push(`${path}: ${psnr.toFixed(1)} dB`);
      expect(psnr, path).toBeGreaterThanOrEqual(44);
    }
    console.log(report.join(', '));
  });

  it('decodes the nclx fixtures (P3, BT.2020 10-bit) to pixels the colour stage turns into the picture they were made from', async () => {
    const rgb = syntheticRgb();
    const truth = { data: new Uint8Array(WIDTH * HEIGHT * 4), width: WIDTH, height: HEIGHT };
    for (let i = 0; i < WIDTH * HEIGHT; i++) truth.data.set([rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], 255], 4 * i);
    for (const path of ['cicp/p3-nclx.avif', 'cicp/bt2020-nclx.avif']) {
      const { mean, p95 } = deltaE2000Stats(await decodeToSrgb(await fixture(path)), truth);
      expect(mean, `${path}: mean ΔE2000`).toBeLessThanOrEqual(1);
      expect(p95, `${path}: 95th percentile ΔE2000`).toBeLessThanOrEqual(2);
    }
  });

  it('decodes grids, limited range, monochrome, identity, premultiplied alpha and clap at least as close to their source as the reference decoder', { timeout: 60_000 }, async () => {
    const source = await referenceDecode(await fixture('avif/source.png'));
    const sourceWithAlpha = await referenceDecode(await fixture('avif/source-alpha.png'));
    const report: string[] = [];
    const cases: [string, RgbaImage, number][] = [
      ['avif/grid-3x2-8bit-420.avif', source, 0],
      ['avif/grid-2x2-10bit-444-alpha.avif', sourceWithAlpha, 64],
      ['avif/grid-2x2-12bit-422.avif', source, 0],
      ['avif/limited-bt709-8bit-420.avif', source, 0],
      // libheif leaves monochrome in limited range; ours must be near the grey the encoder made (BT.601 luma).
      ['avif/limited-mono-10bit.avif', greyBt601(source), 0],
      ['avif/identity-8bit-444.avif', source, 0],
      ['avif/premultiplied-8bit-alpha.avif', sourceWithAlpha, 64],
      ['avif/clap-8bit-420.avif', crop(source, { x: 20, y: 14, width: 150, height: 100 }), 0],
    ];
    for (const [path, truth, minAlpha] of cases) {
      const input = await fixture(path);
      const ours = await decode(input);
      const oursPsnr = colourPsnr(ours, truth, minAlpha);
      const referencePsnr = colourPsnr(await referenceDecode(input), truth, minAlpha);
      report.push(`${path}: ${oursPsnr.toFixed(1)} dB (sharp ${referencePsnr.toFixed(1)})`);
      expect(oursPsnr, path).toBeGreaterThanOrEqual(referencePsnr - 0.1);
      expect(oursPsnr, path).toBeGreaterThanOrEqual(30);
      if (minAlpha > 0) {
        let alphaError = 0;
        for (let i = 3; i < truth.data.length; i += 4) alphaError = Math.max(alphaError, Math.abs(ours.data[i] - truth.data[i]));
        expect(alphaError, `${path} alpha`).toBeLessThanOrEqual(8);
      }
    }
    console.log(`against the source picture: ${report.join(', ')}`);
  });

  it('shows the first frame of an image sequence, with or without a primary item', async () => {
    const sequence = await fixture('animated/red-then-blue.avif');
    const withoutMeta = sequence.slice();
    const meta = withoutMeta.findIndex((_, i) => [0x6d, 0x65, 0x74, 0x61].every((c, k) => withoutMeta[i + k] === c));
    withoutMeta.set([0x66, 0x72, 0x65, 0x65], meta); // 'free': the tracks alone remain
    for (const input of [sequence, withoutMeta]) {
      const frame = await decode(input);
      expect([frame.width, frame.height]).toEqual([32, 24]);
      for (let i = 0; i < frame.data.length; i += 4) {
        const [r, g, b, a] = frame.data.subarray(i, i + 4);
        expect(r > 240 && g < 16 && b < 16 && a === 255, `pixel ${i / 4}: ${r},${g},${b},${a}`).toBe(true);
      }
    }
  });

  it('gives the same pixels whatever the band height', async () => {
    for (const path of [FOX_ODD, 'avif/grid-3x2-8bit-420.avif', 'avif/grid-2x2-10bit-444-alpha.avif', 'avif/premultiplied-8bit-alpha.avif']) {
      const input = path.startsWith('avif/fox') ? await corpus(path) : await fixture(path);
      const whole = await decode(input, null, 10_000);
      for (const bandRows of [1, 3, 16]) expect((await decode(input, null, bandRows)).data, `${path} in bands of ${bandRows}`).toEqual(whole.data);
    }
  });

  it('decodes a region as exactly the crop of the whole image', async () => {
    const regions: Region[] = [
      { x: 0, y: 0, width: 1, height: 1 },
      { x: 1, y: 1, width: 2, height: 3 },
      { x: 37, y: 29, width: 51, height: 40 },
      { x: 63, y: 63, width: 66, height: 2 },
    ];
    for (const path of [FOX_ODD, 'avif/grid-3x2-8bit-420.avif', 'avif/grid-2x2-12bit-422.avif', 'avif/grid-2x2-10bit-444-alpha.avif', 'avif/clap-8bit-420.avif', 'avif/limited-mono-10bit.avif']) {
      const input = path.startsWith('avif/fox') ? await corpus(path) : await fixture(path);
      const whole = await decode(input);
      const edge = { x: whole.width - 5, y: whole.height - 3, width: 5, height: 3 };
      for (const region of [...regions, edge]) {
        expect((await decode(input, region, 7)).data, `${path} ${JSON.stringify(region)}`).toEqual(crop(whole, region).data);
      }
    }
  });

  it('reconstructs a grid exactly as its tiles decode alone, away from the seams where chroma is filtered across tiles', async () => {
    for (const path of [FOX, 'avif/fox.profile0.10bpc.yuv420.avif', 'avif/fox.profile2.12bpc.yuv422.avif', 'avif/fox.profile1.8bpc.yuv444.avif']) {
      const input = await corpus(path);
      const tile = av1ItemOf(input);
      const single = await decode(input);
      const { file, width, height } = gridOf(tile, 2, 3);
      const grid = await decode(file);
      expect([grid.width, grid.height]).toEqual([width, height]);
      let seamDifference = 0;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const [tx, ty] = [x % tile.width, y % tile.height];
          const nearSeam = tx <= 1 || tx >= tile.width - 2 || ty <= 1 || ty >= tile.height - 2 || x === width - 1 || y === height - 1;
          const at = (y * width + x) * 4;
          const from = (ty * tile.width + tx) * 4;
          for (let c = 0; c < 4; c++) {
            const difference = Math.abs(grid.data[at + c] - single.data[from + c]);
            if (nearSeam) seamDifference = Math.max(seamDifference, difference);
            else if (difference) expect.fail(`${path}: (${x}, ${y}) differs from its tile by ${difference}`);
          }
        }
      }
      expect(seamDifference, `${path}: chroma is filtered across the seams`).toBeLessThan(64);
    }
  });

  it('holds one row of grid tiles, as the memory plan says, and releases its wasm memory when closed', { timeout: 60_000 }, async () => {
    const tile = av1ItemOf(await corpus(FOX));
    const { file } = gridOf(tile, 4, 4); // 4816 x 3200, 15 MP in 1 MP tiles
    const before = liveCodecMemoryBytes();
    const source = await openDecode(file, { shrink: 1, region: null });
    const peak = await drain(source);
    const planned = avifDecodeMemory(verifiedAvif(file), source.width, 16);
    expect(peak.wasm - before).toBeLessThanOrEqual(planned.wasmBytes);
    expect(peak.wasm - before, 'about one row of four 1 MP tiles, not 15 MP').toBeLessThan(16 * 2 ** 20);
    expect(liveCodecMemoryBytes()).toBe(before);

    // A region inside one column of tiles decodes that column's tiles only (quality=auto's check
    // of a large AVIF reads its sample's tiles so): a quarter of what a row holds.
    const region = await openDecode(file, { shrink: 1, region: { x: 1300, y: 900, width: 128, height: 128 } });
    const regionPeak = await drain(region);
    expect(regionPeak.wasm - before).toBeLessThan((peak.wasm - before) / 2);
    expect(liveCodecMemoryBytes()).toBe(before);
  });

  it('holds no more than its memory plan for every corpus file and fixture', { timeout: 120_000 }, async () => {
    const files: [string, Uint8Array][] = [];
    for (const path of Object.keys(AVIFS)) files.push([path, await corpus(path)]);
    for (const path of ['avif/grid-3x2-8bit-420.avif', 'avif/grid-2x2-10bit-444-alpha.avif', 'avif/grid-2x2-12bit-422.avif', 'avif/limited-mono-10bit.avif', 'avif/premultiplied-8bit-alpha.avif', 'alpha/alpha-12bit.avif', 'animated/red-then-blue.avif']) {
      files.push([path, await fixture(path)]);
    }
    for (const depth of ['avif/fox.profile0.10bpc.yuv420.avif', 'avif/fox.profile2.12bpc.yuv422.avif']) files.push([`grid of ${depth}`, gridOf(av1ItemOf(await corpus(depth)), 2, 2).file]);
    const report: string[] = [];
    for (const [name, input] of files) {
      const before = liveCodecMemoryBytes();
      const source = await openDecode(input, { shrink: 1, region: null });
      const peak = await drain(source);
      const planned = avifDecodeMemory(verifiedAvif(input), source.width, 16);
      const pixels = source.width * source.height;
      report.push(`${name}: ${((peak.wasm - before) / 2 ** 20).toFixed(1)} of ${(planned.wasmBytes / 2 ** 20).toFixed(1)} MiB (${((peak.wasm - before) / pixels).toFixed(2)} B/px)`);
      expect(peak.wasm - before, name).toBeLessThanOrEqual(planned.wasmBytes);
      expect(peak.js, name).toBeLessThanOrEqual(planned.jsBytes);
    }
    console.log(`wasm memory measured / planned: ${report.join('; ')}`);
  });

  // sharp's (libavif's) default layout is one item: dav1d holds that whole frame at the stream's own
  // depth and subsampling and nothing else of its size (no film grain or superres picture).
  it.each([
    ['avif-24mp-420.avif', 'an 8-bit 4:2:0'],
    ['avif-24mp.avif', 'an 8-bit 4:4:4'],
  ])('holds %s (%s 24 MP single item) within its memory plan, and no more than 15 percent below it', { timeout: 60_000 }, async (name) => {
    const input = await largeInput(name);
    const before = liveCodecMemoryBytes();
    const source = await openDecode(input, { shrink: 1, region: null });
    const peak = await drain(source);
    const planned = avifDecodeMemory(verifiedAvif(input), source.width, 16);
    expect(peak.wasm - before).toBeLessThanOrEqual(planned.wasmBytes);
    expect(peak.wasm - before).toBeGreaterThan(planned.wasmBytes * 0.85);
    expect(peak.js).toBeLessThanOrEqual(planned.jsBytes);
  });

  it('reports alpha and grey as the file has them', async () => {
    const flags = async (input: Uint8Array) => {
      const source = await openDecode(input, { shrink: 1, region: null });
      source.close();
      return [source.alpha, source.grey];
    };
    expect(await flags(await corpus(FOX))).toEqual([false, false]);
    expect(await flags(await corpus('avif/fox.profile0.8bpc.yuv420.monochrome.avif'))).toEqual([false, true]);
    expect(await flags(await fixture('alpha/alpha-10bit.avif'))).toEqual([true, false]);
  });

  it('refuses damaged files with UNSUPPORTED_FORMAT, never another error', { timeout: 120_000 }, async () => {
    const input = await corpus(FOX);
    const outcomes = { decoded: 0, refused: 0 };
    const attempt = async (file: Uint8Array, label: string) => {
      try {
        const image = await decode(file);
        expect([image.width, image.height], label).toEqual([1204, 800]);
        outcomes.decoded++;
      } catch (error) {
        expect(error, label).toBeInstanceOf(AppError);
        expect((error as AppError).code, label).toBe('UNSUPPORTED_FORMAT');
        expect(String((error as AppError).detail), `${label}: dav1d must not trap`).not.toMatch(/trapped/);
        outcomes.refused++;
      }
    };
    for (const length of [100, 400, 1000, 5000, 40_000, input.length - 1]) await attempt(input.subarray(0, length), `cut at ${length}`);
    const { color } = verifiedAvif(input);
    const data = color.tiles[0].ranges[0];
    let seed = 1;
    for (let run = 0; run < 40; run++) {
      const damaged = input.slice();
      for (let i = 0; i < 1 + (run % 8); i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        damaged[data.start + 16 + (seed % (data.end - data.start - 16))] ^= 1 << (seed % 8);
      }
      await attempt(damaged, `AV1 data mutation ${run}`);
    }
    expect(outcomes.refused).toBeGreaterThan(0);
    console.log(`damaged fox: ${outcomes.decoded} decoded to full size, ${outcomes.refused} refused`);
  });

  it('refuses grids whose tiles do not fit together', async () => {
    const fox8 = av1ItemOf(await corpus(FOX));
    const fox10 = av1ItemOf(await corpus('avif/fox.profile0.10bpc.yuv420.avif'));
    const mixed = gridOf(fox8, 1, 2, [av01Item(10, fox8), av01Item(11, fox10)]).file;
    expect(String((await refusal(mixed)).detail)).toMatch(/grid tiles differ in format/);
    const missing = gridOf(fox8, 1, 2, [av01Item(10, fox8), { ...av01Item(11, fox8), id: 12 }], [10, 11]).file;
    expect(String((await refusal(missing)).detail)).toMatch(/tile 11 is not an av01 item/);
    const wrongData = gridOf(fox8, 1, 2, [av01Item(10, fox8), { ...av01Item(11, fox8), data: av1ItemOf(await corpus(FOX_ODD)).data }]).file;
    expect(String((await refusal(wrongData)).detail)).toMatch(/AV1 max frame 1203x799 is smaller than its ispe 1204x800/);
  });
});

async function refusal(file: Uint8Array): Promise<AppError> {
  try {
    await decode(file);
  } catch (error) {
    return expectAppError(() => {
      throw error;
    }, 'UNSUPPORTED_FORMAT');
  }
  throw new Error('expected a refusal');
}

/** A grid of rows x columns copies of `tile` (or the given tiles), cut 10 and 6 pixels short of the tiles. */
function gridOf(tile: Av1Item, rows: number, columns: number, tiles?: ItemSpec[], references?: number[]) {
  const width = columns * tile.width - 10;
  const height = rows * tile.height - 6;
  const items = tiles ?? Array.from({ length: rows * columns }, (_, i) => av01Item(10 + i, tile));
  const file = buildAvif({
    primary: 1,
    items: [{ id: 1, type: 'grid', data: gridData(rows, columns, width, height), properties: [ispe(width, height)], inIdat: true }, ...items],
    references: [{ type: 'dimg', from: 1, to: references ?? items.map((item) => item.id) }],
  });
  return { file, width, height };
}

/** Reads a source to its end; the largest wasm memory and JS bytes it held meanwhile. */
async function drain(source: RowSource): Promise<{ wasm: number; js: number }> {
  let wasm = liveCodecMemoryBytes();
  let js = source.heldBytes();
  for (let band = await source.read(); band; band = await source.read()) {
    wasm = Math.max(wasm, liveCodecMemoryBytes());
    js = Math.max(js, source.heldBytes());
  }
  return { wasm, js };
}
