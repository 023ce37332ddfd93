import { describe, expect, it } from 'vitest';
import { bandsOf, pictureOf as picture, readBands } from '../../../test/support/row-sources';
import { sharpenRows } from './sharpen';

describe('sharpen', () => {
  it('leaves a flat picture exactly as it was', async () => {
    const flat = picture(25, 9, () => [30, 160, 90, 255]);
    const { image } = await readBands(sharpenRows(bandsOf(flat, [4], false), 2));
    expect(image.data).toEqual(flat.data);
  });

  it('steepens an edge in lightness only: darker before it, lighter after, the hue kept', async () => {
    // Two blues of different lightness: sharpened, each side moves away from the other.
    const dark = [20, 40, 120, 255];
    const light = [90, 120, 230, 255];
    const edge = picture(20, 6, (x) => (x < 10 ? dark : light));
    const { image } = await readBands(sharpenRows(bandsOf(edge, [6], false), 1));
    const at = (x: number) => [...image.data.subarray((3 * 20 + x) * 4, (3 * 20 + x) * 4 + 4)];
    expect(at(0)).toEqual(dark);
    expect(at(19)).toEqual(light);
    const before = at(9);
    const after = at(10);
    expect(before[0] + before[1] + before[2]).toBeLessThan(dark[0] + dark[1] + dark[2]);
    expect(after[0] + after[1] + after[2]).toBeGreaterThan(light[0] + light[1] + light[2]);
    // Still blue: blue the largest channel and red the smallest (darkening by 20 L* takes red and green to 0 here, as in sharp).
    for (const [r, g, b] of [before, after]) expect(b > g && g >= r, `${[r, g, b]} from ${before} ${after}`).toBe(true);
  });
});
