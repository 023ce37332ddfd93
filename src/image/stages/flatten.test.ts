import { describe, expect, it } from 'vitest';
import { flattenRows } from './flatten';
import { collectFrame, frameSource } from '../../../test/support/row-sources';

const image = (...pixels: number[][]) => ({ data: new Uint8Array(pixels.flat()), width: pixels.length, height: 1 });

describe('flattenRows', () => {
  it('puts transparent pixels on white, whatever colour they hide', async () => {
    const source = frameSource(image([0, 0, 0, 0], [255, 0, 0, 255], [0, 0, 255, 128], [10, 200, 30, 0]), { alpha: true });
    const flat = flattenRows(source);
    expect(flat.alpha).toBe(false);
    expect([...(await collectFrame(flat)).data]).toEqual([255, 255, 255, 255, 255, 0, 0, 255, 127, 127, 255, 255, 255, 255, 255, 255]);
  });

  it('passes a source without alpha through untouched', () => {
    const opaque = frameSource(image([1, 2, 3, 255], [4, 5, 6, 255]), { alpha: false });
    expect(flattenRows(opaque)).toBe(opaque);
  });
});

describe('flattenRows onto a chosen background', () => {
  it('composites over the colour asked for, ignoring its alpha', async () => {
    const source = frameSource(image([0, 0, 0, 0], [0, 0, 255, 128]), { alpha: true });
    const flat = flattenRows(source, { r: 255, g: 0, b: 0, a: 0 });
    expect([...(await collectFrame(flat)).data]).toEqual([255, 0, 0, 255, 127, 0, 128, 255]);
  });
});
