import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AVIF_MAX_ITEMS, AVIF_MAX_TILE_SIDE, planAvifLayout } from './encode-layout';

describe('AVIF tile layout', () => {
  it('cuts photos into the fewest tiles of at most 400 px, each a multiple of 8', () => {
    expect(planAvifLayout(4000, 3000)).toEqual({ columns: 10, rows: 8, tileWidth: 400, tileHeight: 376 });
    expect(planAvifLayout(6000, 4000)).toEqual({ columns: 15, rows: 10, tileWidth: 400, tileHeight: 400 });
    expect(planAvifLayout(1600, 1200)).toEqual({ columns: 4, rows: 3, tileWidth: 400, tileHeight: 400 });
  });

  it('keeps results no larger than one tile as one item', () => {
    expect(planAvifLayout(384, 384)).toEqual({ columns: 1, rows: 1, tileWidth: 384, tileHeight: 384 });
    expect(planAvifLayout(1024, 128)).toEqual({ columns: 1, rows: 1, tileWidth: 1024, tileHeight: 128 });
  });

  // libheif (sharp, libvips) refuses a file with more than 256 items with data: 48 MP in 400 px
  // tiles made 300 and the grid.
  it('keeps the tiles, the grid and their alpha twins within libheif\'s 256 items, with larger tiles where needed', () => {
    expect(planAvifLayout(8000, 6000)).toEqual({ columns: 18, rows: 14, tileWidth: 448, tileHeight: 432 });
    expect(planAvifLayout(6000, 4000, true)).toEqual({ columns: 14, rows: 9, tileWidth: 432, tileHeight: 448 });
    expect(planAvifLayout(8000, 6000, true)).toEqual({ columns: 12, rows: 9, tileWidth: 672, tileHeight: 672 });
  });

  it('gives sides under 64 px one column or row of 64 px tiles (MIAF minimum)', () => {
    expect(planAvifLayout(40, 12000)).toEqual({ columns: 1, rows: 30, tileWidth: 64, tileHeight: 400 });
  });

  it('covers the even canvas with equal even tiles, the last row and column overlapping it (HEIF, MIAF)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12000 }), fc.integer({ min: 1, max: 12000 }), fc.boolean(), (width, height, alpha) => {
        const { columns, rows, tileWidth, tileHeight } = planAvifLayout(width, height, alpha);
        if (columns * rows === 1) {
          expect([tileWidth, tileHeight]).toEqual([width, height]);
          expect(width * height).toBeLessThanOrEqual(AVIF_MAX_TILE_SIDE ** 2);
          return;
        }
        for (const [count, tile, side] of [[columns, tileWidth, width], [rows, tileHeight, height]]) {
          const canvas = Math.max(64, side + (side % 2));
          expect(tile % 2).toBe(0);
          expect(tile).toBeGreaterThanOrEqual(64);
          expect(tile).toBeLessThanOrEqual(canvas);
          expect(count * tile).toBeGreaterThanOrEqual(canvas);
          expect((count - 1) * tile).toBeLessThan(canvas);
          expect(count).toBeLessThanOrEqual(256);
        }
        // The tiles, the grid, and for alpha the same again.
        expect((columns * rows + 1) * (alpha ? 2 : 1)).toBeLessThanOrEqual(AVIF_MAX_ITEMS);
      }),
      { numRuns: 2000 },
    );
  });
});
