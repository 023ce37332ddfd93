import { describe, expect, it } from 'vitest';
import { bandsOf, readBands } from '../../../test/support/row-sources';
import { grayscaleRows, greyOf } from './grayscale';

const word = (r: number, g: number, b: number, a = 255) => r | (g << 8) | (b << 16) | (a << 24);

describe('grayscale', () => {
  it('keeps every grey as it is', () => {
    for (let v = 0; v < 256; v++) expect(greyOf(word(v, v, v))).toBe(v);
  });

  it('weighs linear light as libvips does (sharp greyscale: red 127, green 220, blue 76)', () => {
    expect([greyOf(word(255, 0, 0)), greyOf(word(0, 255, 0)), greyOf(word(0, 0, 255))]).toEqual([127, 220, 76]);
  });

  it('greys bands in place, keeps alpha and says the rows are grey', async () => {
    const data = Uint8Array.from([255, 0, 0, 40, 10, 200, 30, 255]);
    const source = grayscaleRows(bandsOf({ data, width: 2, height: 1 }, [1]));
    expect(source.grey).toBe(true);
    const { image } = await readBands(source);
    expect([...image.data]).toEqual([127, 127, 127, 40, 147, 147, 147, 255].map((v, i) => (i === 4 || i === 5 || i === 6 ? greyOf(word(10, 200, 30)) : v)));
  });
});
