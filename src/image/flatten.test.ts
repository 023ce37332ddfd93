import { describe, expect, it } from 'vitest';
import { flattenOnWhite } from './flatten';

const image = (...pixels: number[][]) => ({ data: new Uint8Array(pixels.flat()), width: pixels.length, height: 1 });

describe('flattenOnWhite', () => {
  it('puts transparent pixels on white, whatever colour they hide', () => {
    const flat = flattenOnWhite(image([0, 0, 0, 0], [255, 0, 0, 255], [0, 0, 255, 128], [10, 200, 30, 0]));
    expect([...flat.data]).toEqual([255, 255, 255, 255, 255, 0, 0, 255, 127, 127, 255, 255, 255, 255, 255, 255]);
  });

  it('returns an opaque image untouched', () => {
    const opaque = image([1, 2, 3, 255], [4, 5, 6, 255]);
    expect(flattenOnWhite(opaque)).toBe(opaque);
  });
});
