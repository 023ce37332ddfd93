import { describe, expect, it } from 'vitest';
import { boxShrinkFactor, boxShrinkOpaque, boxShrunkSize } from './box-shrink';
import { pixelWords } from './pixels';

const rgb = (word: number) => [word & 255, (word >> 8) & 255, (word >> 16) & 255, (word >>> 24) & 255];

describe('box shrink', () => {
  it('shrinks only while at least twice the target size is left (vips_resize gap 2)', () => {
    expect(boxShrinkFactor(4000, 1000)).toBe(2);
    expect(boxShrinkFactor(4000, 999)).toBe(2);
    expect(boxShrinkFactor(4000, 1001)).toBe(1);
    expect(boxShrinkFactor(4000, 2000)).toBe(1);
    expect(boxShrinkFactor(4000, 400)).toBe(5);
    expect(boxShrinkFactor(4000, 1)).toBe(2000);
    expect(boxShrinkFactor(100, 300)).toBe(1);
    expect(boxShrunkSize({ width: 4000, height: 3000 }, { width: 1000, height: 750 })).toEqual({ width: 2000, height: 1500 });
    expect(boxShrunkSize({ width: 4001, height: 3000 }, { width: 1000, height: 3000 })).toEqual({ width: 2001, height: 3000 });
  });

  it('averages each box to the nearest level; boxes cut by the edges average what they hold', () => {
    // 5x3, red = x * 10 + y, green = 255 - red, blue = 1 on odd pixels; 2x2 boxes.
    const bytes = new Uint8Array(5 * 3 * 4);
    for (let y = 0; y < 3; y++)
      for (let x = 0; x < 5; x++) bytes.set([x * 10 + y, 255 - (x * 10 + y), (x + y) % 2, 255], (y * 5 + x) * 4);
    const { words, width, height } = boxShrinkOpaque(pixelWords(bytes), 5, 3, 2, 2);
    expect([width, height]).toEqual([3, 2]);
    const mean = (values: number[]) => Math.floor(values.reduce((a, b) => a + b, 0) / values.length + 0.5);
    for (let oy = 0; oy < 2; oy++) {
      for (let ox = 0; ox < 3; ox++) {
        const reds: number[] = [];
        const blues: number[] = [];
        for (let y = 2 * oy; y < Math.min(3, 2 * oy + 2); y++)
          for (let x = 2 * ox; x < Math.min(5, 2 * ox + 2); x++) {
            reds.push(x * 10 + y);
            blues.push((x + y) % 2);
          }
        const expected = [mean(reds), mean(reds.map((r) => 255 - r)), mean(blues), 255];
        expect(rgb(words[oy * 3 + ox]), `box ${ox},${oy}`).toEqual(expected);
      }
    }
  });

  it('keeps a constant constant, and stays exact when a box sums past 2^32 (4200 x 4200 pixels of 255)', () => {
    const white = new Int32Array(4200 * 4200).fill(-1); // 255,255,255,255
    const one = boxShrinkOpaque(white, 4200, 4200, 4200, 4200);
    expect(rgb(one.words[0])).toEqual([255, 255, 255, 255]);
    const grey = new Int32Array(7 * 5).fill(0xff646464 | 0);
    const shrunk = boxShrinkOpaque(grey, 7, 5, 3, 2);
    expect(Array.from(shrunk.words, rgb)).toEqual(Array(3 * 3).fill([100, 100, 100, 255]));
  });
});
