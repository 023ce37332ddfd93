import { describe, expect, it } from 'vitest';
import { padRows } from './pad';
import { bandsOf, readBands } from '../../../test/support/row-sources';

const RED = [255, 0, 0, 255];

describe('padRows', () => {
  it('places the picture in the box and fills the rest with the background, whatever the band heights', async () => {
    const picture = { data: new Uint8Array(Array.from({ length: 6 }, () => RED).flat()), width: 3, height: 2 };
    for (const heights of [[1], [2], [64]]) {
      const padded = padRows(bandsOf(picture, heights, false), { width: 5, height: 40 }, { x: 1, y: 30, width: 3, height: 2 }, { r: 0, g: 0, b: 255, a: 0 });
      expect(padded.alpha).toBe(true);
      const { image } = await readBands(padded);
      const pixel = (x: number, y: number) => [...image.data.subarray((y * 5 + x) * 4, (y * 5 + x + 1) * 4)];
      expect(pixel(0, 0)).toEqual([0, 0, 255, 0]);
      expect(pixel(0, 30)).toEqual([0, 0, 255, 0]);
      expect(pixel(1, 30)).toEqual(RED);
      expect(pixel(3, 31)).toEqual(RED);
      expect(pixel(4, 31)).toEqual([0, 0, 255, 0]);
      expect(pixel(2, 32)).toEqual([0, 0, 255, 0]);
      expect(pixel(2, 39)).toEqual([0, 0, 255, 0]);
    }
  });

  it('keeps an opaque picture opaque on an opaque background', () => {
    const picture = { data: new Uint8Array(RED), width: 1, height: 1 };
    expect(padRows(bandsOf(picture, [1], false), { width: 2, height: 2 }, { x: 0, y: 0, width: 1, height: 1 }, { r: 1, g: 2, b: 3, a: 255 }).alpha).toBe(false);
  });
});
