import { describe, expect, it } from 'vitest';
import { AVIFS, corpus, expectAppError, fixture, largeInput } from '../../../../test/support/image-testing';
import { collectFrame } from '../../../../test/support/row-sources';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import type { Region } from '../../operations';
import type { RgbaImage } from '../../types';
import { openAvif } from './decode';
import { readAvifHeader } from './header';
import { avifDecodeMemory, windowable } from './memory';
import { verifyAv1Sizes } from './verify';

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

  it('a 48 MP AVIF with an alpha item: both frames in windows (69 + 48 MB whole), the same pixels, within the plan', { timeout: 120_000 }, async () => {
    await expectLargeWindowed('avif-48mp-alpha.avif', 80);
  });
});
