import { describe, expect, it } from 'vitest';
import { readSettings } from '../../../config';
import { AVIFS, corpus, expectAppError, fixture, fixtureList, largeInput } from '../../../../test/support/image-testing';
import { collectFrame } from '../../../../test/support/row-sources';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import type { Transform, Region } from '../../operations';
import { processImage } from '../../pipeline';
import type { RgbaImage } from '../../types';
import { openAvif } from './decode';
import { readAvifHeader } from './header';
import { avifDecodeMemory, windowable, windowAlwaysSuffices } from './memory';
import { verifyAv1Sizes } from './verify';

const MiB = 2 ** 20;
const SCREEN = 'avif/screen-intrabc-8bit-444.avif';

/** Decodes `input` whole or into a window of rows, and the most codec memory that was live meanwhile. */
async function decode(input: Uint8Array, rowWindow: boolean, region: Region | null = null): Promise<{ image: RgbaImage; peakBytes: number }> {
  const header = readAvifHeader(input);
  verifyAv1Sizes(header);
  const source = await openAvif(input, header, { shrink: 1, region, rowWindow });
  let peakBytes = liveCodecMemoryBytes();
  const rows = new Uint8Array(source.width * source.height * 4);
  for (let band = await source.read(); band; band = await source.read()) {
    peakBytes = Math.max(peakBytes, liveCodecMemoryBytes());
    rows.set(band.data, band.y * source.width * 4);
  }
  return { image: { data: rows, width: source.width, height: source.height }, peakBytes };
}

function expectSamePixels(actual: RgbaImage, expected: RgbaImage): void {
  expect([actual.width, actual.height]).toEqual([expected.width, expected.height]);
  // Compared whole: one differing byte anywhere fails.
  expect(Buffer.from(actual.data).equals(Buffer.from(expected.data))).toBe(true);
}

/**
 * A large input decoded in windows: the plan counts at least `savingMiB` less than whole, the
 * decode holds at most that plan, and gives the whole decode's pixels.
 */
async function expectLargeWindowed(name: string, savingMiB: number): Promise<{ whole: number; windowed: { peakBytes: number } }> {
  const input = await largeInput(name);
  const { container } = readAvifHeader(input);
  const width = container.size.width;
  const whole = avifDecodeMemory(container, width, 16).wasmBytes;
  const windowedPlan = avifDecodeMemory(container, width, 16, true).wasmBytes;
  expect(whole - windowedPlan).toBeGreaterThan(savingMiB * 2 ** 20);
  const windowed = await decode(input, true);
  expect(windowed.peakBytes).toBeLessThanOrEqual(windowedPlan);
  const reference = await decode(input, false);
  expectSamePixels(windowed.image, reference.image);
  return { whole, windowed };
}

describe('AVIF frames decoded into a window of rows', () => {
  it.each(Object.keys(AVIFS))('%s: the same pixels as the whole picture', async (name) => {
    const input = await corpus(name);
    expect(windowable(readAvifHeader(input).container)).toBe(true);
    const whole = await decode(input, false);
    const windowed = await decode(input, true);
    expectSamePixels(windowed.image, whole.image);
  });

  it('a crop starting far down the frame reads the same rows', async () => {
    const input = await corpus('avif/fox.profile0.10bpc.yuv420.avif');
    const region = { x: 101, y: 517, width: 700, height: 201 };
    const whole = collectFrame(await openAvif(input, readAvifHeader(input), { shrink: 1, region }));
    expectSamePixels((await decode(input, true, region)).image, await whole);
  });

  it('a 24 MP 4:4:4 frame (72 MB whole) holds a few MB of picture, and the plan counts it', async () => {
    const { whole, windowed } = await expectLargeWindowed('avif-24mp.avif', 60);
    expect(windowed.peakBytes).toBeLessThan(whole - 60 * 2 ** 20);
  });

  it('a frame that uses intra block copy (screen content, as libaom codes it by itself) is refused in a window and decodes whole', async () => {
    const input = await fixture('avif/screen-intrabc-8bit-444.avif');
    const error = await decode(input, true).then(
      () => null,
      (e: unknown) => e,
    );
    const { message } = expectAppError(() => {
      throw error;
    }, 'FILE_TOO_LARGE');
    expect(message).toMatch(/has to be decoded whole \(it uses intra block copy\)/);
    const whole = await decode(input, false);
    expect([whole.image.width, whole.image.height]).toEqual([512, 512]);
    expect(liveCodecMemoryBytes()).toBe(0);
  });

  it('decodes an alpha item in a window of its own (a second instance) to the same pixels', async () => {
    const input = await fixture('avif/premultiplied-8bit-alpha.avif');
    expect(readAvifHeader(input).container.alpha).not.toBeNull();
    expect(windowable(readAvifHeader(input).container)).toBe(true);
    expectSamePixels((await decode(input, true)).image, (await decode(input, false)).image);
    expect(liveCodecMemoryBytes()).toBe(0);
  });

  it("reads from each frame's header whether it may copy intra blocks: only the screen content may", async () => {
    const fixtures = (await fixtureList('avif')).filter((name) => name.endsWith('.avif'));
    const names = [...Object.keys(AVIFS), ...fixtures];
    const files = await Promise.all(names.map((name) => (fixtures.includes(name) ? fixture(name) : corpus(name))));
    // Grids are never decoded in a window (their tiles are small already): asked of their tiles.
    const mayCopy = files.map((file) => readAvifHeader(file).container.color.tiles.some((image) => image.mayCopyIntraBlocks !== false));
    expect(names.filter((_, i) => mayCopy[i])).toEqual([SCREEN]);
    expect(files.filter((file) => windowAlwaysSuffices(readAvifHeader(file).container))).toHaveLength(names.length - 1 - fixtures.filter((name) => name.includes('grid')).length);
  });

  it("a frame header's allow_intrabc is what counts: screen content tools alone do not copy blocks", async () => {
    const input = await corpus('avif/fox.profile0.8bpc.yuv420.avif');
    expect(windowAlwaysSuffices(readAvifHeader(input).container)).toBe(true);
    // The header's first bits: disable_cdf_update, allow_screen_content_tools, force_integer_mv,
    // render_and_frame_size_different (0 here), allow_intrabc.
    const headerWith = (set: number) => withFrameHeaderByte(input, (byte) => (byte & 0xa0) | set);
    expect(windowAlwaysSuffices(readAvifHeader(headerWith(0b0100_1000)).container)).toBe(false);
    expect(windowAlwaysSuffices(readAvifHeader(headerWith(0b0100_0000)).container)).toBe(true);
    expect(windowAlwaysSuffices(readAvifHeader(headerWith(0b0000_1000)).container)).toBe(true);
  });

  it.each(['avif/clap-8bit-420.avif', 'avif/identity-8bit-444.avif', 'avif/limited-mono-10bit.avif'])(
    '%s (screen content tools allowed, no intra block copy) decodes in a window to the same pixels',
    async (name) => {
      const input = await fixture(name);
      expect(windowAlwaysSuffices(readAvifHeader(input).container)).toBe(true);
      expectSamePixels((await decode(input, true)).image, (await decode(input, false)).image);
    },
  );

  it('a 24 MP frame resized is decoded in a window: it leaves most of the budget to requests beside it', { timeout: 60_000 }, async () => {
    const resize: Transform = { steps: [{ op: 'resize', width: 1600, keepAspectRatio: true }], format: 'webp', quality: 80 };
    const result = await processImage(await largeInput('avif-24mp.avif'), resize, readSettings({}).pixelLimits.pro);
    expect([result.width, result.height]).toEqual([1600, 1067]);
    // Decoded whole, it planned 99 MiB of the 100 (small conversions beside it waited 2 s).
    expect(result.plannedPeakBytes).toBeLessThan(40 * MiB);
    expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
  });

  it('where the whole picture fits, only a frame that may copy intra blocks keeps it', async () => {
    const convert: Transform = { steps: [], format: 'png', quality: 80 };
    for (const [name, windowed] of [['avif/fox.profile0.8bpc.yuv420.avif', true], [SCREEN, false]] as const) {
      const input = name === SCREEN ? await fixture(name) : await corpus(name);
      const whole = await processImage(input, convert, { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 1024 * MiB });
      // A budget the whole picture fits, with less room beside it than small conversions want.
      const tight = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: whole.plannedPeakBytes + MiB };
      const result = await processImage(input, convert, tight);
      expect(result.bytes).toEqual(whole.bytes);
      if (windowed) expect(result.plannedPeakBytes).toBeLessThan(whole.plannedPeakBytes);
      else expect(result.plannedPeakBytes).toBe(whole.plannedPeakBytes);
    }
  });

  it('a 48 MP AVIF with an alpha item: both frames in windows (69 + 48 MB whole), the same pixels, within the plan', { timeout: 120_000 }, async () => {
    await expectLargeWindowed('avif-48mp-alpha.avif', 80);
  });
});

/** `input` with the first byte of its frame header (a reduced still picture header) changed by `change`. */
function withFrameHeaderByte(input: Uint8Array, change: (byte: number) => number): Uint8Array {
  const copy = input.slice();
  const { start, end } = readAvifHeader(input).container.color.tiles[0].ranges[0];
  for (let at = start; at < end; ) {
    const header = copy[at];
    let payload = at + 1 + (header & 4 ? 1 : 0);
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = copy[payload++];
      size += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) break;
    }
    const type = (header >> 3) & 15;
    if (type === 6 || type === 3) {
      copy[payload] = change(copy[payload]);
      return copy;
    }
    at = payload + size;
  }
  throw new Error('no frame header');
}
