import { describe, expect, it } from 'vitest';
import { bandsOf } from '../../../test/support/row-sources';
import { texturedPicture } from '../../../test/support/quality-pictures';
import { liveCodecMemoryBytes } from '../codecs/wasm-memory';
import { pictureRows } from '../stages/rows';
import { sampleTrial } from './sample-trial';
import { scoreRows } from './score-rows';

describe('a quality tried on the sample', () => {
  const mosaic = texturedPicture(256, 192);

  it.each(['jpeg', 'webp', 'avif'] as const)('scores %s higher and larger as the quality rises', async (format) => {
    const trial = sampleTrial(format, mosaic, { alpha: false });
    const [low, high] = [await trial(40), await trial(90)];
    expect(high.score).toBeGreaterThan(low.score + 5);
    expect(high.bytes).toBeGreaterThan(low.bytes);
    expect(high.score).toBeLessThan(100);
  });

  it("tries AVIF at the speed the whole picture's size takes, not the mosaic's", async () => {
    const asMosaic = await sampleTrial('avif', mosaic, { alpha: false })(60);
    const as12Megapixels = await sampleTrial('avif', mosaic, { alpha: false }, 12_000_000)(60);
    expect(as12Megapixels.bytes).not.toBe(asMosaic.bytes);
    expect(Math.abs(as12Megapixels.score - asMosaic.score)).toBeLessThan(5);
  });

  it('leaves the mosaic as it was', async () => {
    const copy = mosaic.data.slice();
    await sampleTrial('webp', mosaic, { alpha: false })(60);
    expect(mosaic.data).toEqual(copy);
  });
});

describe('scoreRows', () => {
  const picture = texturedPicture(120, 90);
  const traits = { model: 'rgba' as const, alpha: false, grey: false };

  it('lines up bands of different heights and closes both sources', async () => {
    const a = bandsOf(picture, [7, 1, 30], false);
    const b = bandsOf(picture, [64], false);
    expect(await scoreRows(a, b)).toBe(100);
    expect(a.closed() && b.closed()).toBe(true);
  });

  it('refuses sources of different sizes or one that ends early, closing both', async () => {
    const other = texturedPicture(120, 91);
    const a = bandsOf(picture, [16], false);
    await expect(scoreRows(a, pictureRows(other, traits))).rejects.toThrow(/120x90 against 120x91/);
    expect(a.closed()).toBe(true);
    const short = { ...bandsOf(picture, [16], false), height: 90, read: async () => null };
    const before = liveCodecMemoryBytes();
    await expect(scoreRows(pictureRows(picture, traits), short)).rejects.toThrow(/ended at row 0/);
    // The metric's memory is let go on failure too.
    expect(liveCodecMemoryBytes()).toBe(before);
  });
});
