import { describe, expect, it } from 'vitest';
import { bandsOf, pictureOf as picture, readBands } from '../../../test/support/row-sources';
import { blurRows } from './blur';

describe('blur', () => {
  it('keeps a flat picture flat, whatever the bands', async () => {
    const flat = picture(30, 20, () => [90, 140, 200, 255]);
    for (const heights of [[1], [7, 3], [64]]) {
      const { image } = await readBands(blurRows(bandsOf(flat, heights, false), 3));
      expect(new Set(Array.from({ length: 600 }, (_, i) => image.data.subarray(i * 4, i * 4 + 4).join())).size).toBe(1);
      expect([...image.data.subarray(0, 4)]).toEqual([90, 140, 200, 255]);
    }
  });

  it('blurs premultiplied: a red shape on transparent stays red at its soft edge, no dark fringe', async () => {
    const shape = picture(20, 20, (x) => (x < 10 ? [255, 0, 0, 255] : [0, 0, 0, 0]));
    const { image } = await readBands(blurRows(bandsOf(shape, [16], true), 2));
    for (let x = 8; x < 13; x++) {
      const [r, g, b, a] = image.data.subarray((10 * 20 + x) * 4, (10 * 20 + x) * 4 + 4);
      expect(a, `x ${x}`).toBeGreaterThan(0);
      expect([r, g, b], `x ${x}`).toEqual([255, 0, 0]);
    }
  });

  it('spreads an edge over the mask and no further', async () => {
    const edge = picture(40, 4, (x) => (x < 20 ? [0, 0, 0, 255] : [255, 255, 255, 255]));
    const { image } = await readBands(blurRows(bandsOf(edge, [4], false), 1));
    const row = Array.from({ length: 40 }, (_, x) => image.data[x * 4]);
    // sigma 1: the mask is 12 20 12, one pixel each side.
    expect(row.slice(17, 23)).toEqual([0, 0, Math.round((12 * 255) / 44), Math.round((32 * 255) / 44), 255, 255]);
  });
});
