import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BandFrame } from './band-frame';
import { crop } from './crop';
import { applyOrientation } from './orient';

function numbered(width: number, height: number): Uint8Array {
  const words = new Int32Array(width * height).map((_, i) => i + 1);
  return new Uint8Array(words.buffer);
}

const cases = fc
  .record({ width: fc.integer({ min: 1, max: 9 }), height: fc.integer({ min: 1, max: 9 }), orientation: fc.integer({ min: 1, max: 8 }) })
  .chain(({ width, height, orientation }) => {
    const [dw, dh] = orientation >= 5 ? [height, width] : [width, height];
    return fc
      .record({ x: fc.integer({ min: 0, max: dw - 1 }), y: fc.integer({ min: 0, max: dh - 1 }), band: fc.integer({ min: 1, max: height }) })
      .chain(({ x, y, band }) =>
        fc.record({ width: fc.constant(width), height: fc.constant(height), orientation: fc.constant(orientation), band: fc.constant(band),
          region: fc.record({ x: fc.constant(x), y: fc.constant(y), width: fc.integer({ min: 1, max: dw - x }), height: fc.integer({ min: 1, max: dh - y }) }) }),
      );
  });

describe('BandFrame', () => {
  it('places bands exactly where orienting and then cropping the whole image puts them', () => {
    fc.assert(
      fc.property(cases, ({ width, height, orientation, band, region }) => {
        const stored = numbered(width, height);
        const expected = crop(applyOrientation({ data: stored, width, height }, orientation), region);
        const frame = new BandFrame({ width, height }, orientation, region);
        for (let y = 0; y < height; y += band) {
          const rows = Math.min(band, height - y);
          frame.place(stored.slice(y * width * 4, (y + rows) * width * 4), y, rows);
        }
        expect(frame.image).toEqual({ ...expected, data: new Uint8Array(expected.data) });
      }),
      { numRuns: 2000 },
    );
  });

  it('names the stored rows a region needs, so bands outside it are never decoded', () => {
    fc.assert(
      fc.property(cases, ({ width, height, orientation, region }) => {
        const { first, last } = new BandFrame({ width, height }, orientation, region).neededRows();
        // Only the needed rows carry a marker: the frame must come out complete from them alone.
        const stored = numbered(width, height);
        const frame = new BandFrame({ width, height }, orientation, region);
        frame.place(stored.slice(first * width * 4, (last + 1) * width * 4), first, last - first + 1);
        const expected = crop(applyOrientation({ data: stored, width, height }, orientation), region);
        expect(frame.image.data).toEqual(new Uint8Array(expected.data));
      }),
      { numRuns: 2000 },
    );
  });
});
