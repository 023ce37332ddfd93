import { describe, expect, it } from 'vitest';
import { bandsOf, readBands } from '../../../test/support/row-sources';
import { grayscaleRows } from './grayscale';

/** The greys of a row of pixels, each [r, g, b] or [r, g, b, a], made grey by the stage. */
async function greys(pixels: number[][]): Promise<number[][]> {
  const data = Uint8Array.from(pixels.flatMap(([r, g, b, a = 255]) => [r, g, b, a]));
  const source = grayscaleRows(bandsOf({ data, width: pixels.length, height: 1 }, [1]));
  expect(source.grey).toBe(true);
  const { image } = await readBands(source);
  return pixels.map((_, i) => [...image.data.subarray(i * 4, i * 4 + 4)]);
}

describe('grayscale', () => {
  it('keeps every grey as it is', async () => {
    const all = Array.from({ length: 256 }, (_, v) => [v, v, v]);
    expect(await greys(all)).toEqual(all.map(([v]) => [v, v, v, 255]));
  });

  it('weighs linear light as libvips does (sharp greyscale: red 127, green 220, blue 76)', async () => {
    expect((await greys([[255, 0, 0], [0, 255, 0], [0, 0, 255]])).map(([grey]) => grey)).toEqual([127, 220, 76]);
  });

  it('greys bands in place, keeps alpha and says the rows are grey', async () => {
    const [red, other] = await greys([[255, 0, 0, 40], [10, 200, 30, 255]]);
    expect(red).toEqual([127, 127, 127, 40]);
    expect(other[0]).toBe(other[1]);
    expect(other[1]).toBe(other[2]);
    expect(other[3]).toBe(255);
  });

  it('leaves a grey source as it is', () => {
    const source = { ...bandsOf({ data: new Uint8Array(4), width: 1, height: 1 }, [1]), grey: true };
    expect(grayscaleRows(source)).toBe(source);
  });
});
