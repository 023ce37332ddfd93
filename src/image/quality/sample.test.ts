import { describe, expect, it } from 'vitest';
import { bandsOf, cropImage } from '../../../test/support/row-sources';
import { texturedPicture } from '../../../test/support/quality-pictures';
import { collectSample, sampleBytes, sampleLayout, SAMPLE_GRID, SAMPLE_TILE } from './sample';

describe('the sample', () => {
  it('spreads a grid of tiles across a large picture, on multiples of 16, inside it', () => {
    for (const [width, height] of [[4000, 3000], [1500, 1000], [6000, 333], [1203, 799]]) {
      const layout = sampleLayout(width, height);
      expect(layout.tiles.length).toBeGreaterThan(1);
      for (const tile of layout.tiles) {
        expect(tile.x % 16 === 0 || tile.x === width - SAMPLE_TILE).toBe(true);
        expect(tile.y % 16 === 0 || tile.y === height - SAMPLE_TILE).toBe(true);
        expect(tile.x + tile.width).toBeLessThanOrEqual(width);
        expect(tile.y + tile.height).toBeLessThanOrEqual(height);
      }
      expect(sampleBytes(layout)).toBeLessThanOrEqual(SAMPLE_GRID * SAMPLE_GRID * SAMPLE_TILE * SAMPLE_TILE * 4);
    }
    const spread = sampleLayout(4000, 3000).tiles;
    expect(Math.min(...spread.map((t) => t.x))).toBeLessThan(500);
    expect(Math.max(...spread.map((t) => t.x))).toBeGreaterThan(3400);
  });

  it('takes a picture not much larger than the mosaic whole', () => {
    expect(sampleLayout(640, 480).tiles).toEqual([{ x: 0, y: 0, width: 640, height: 480 }]);
    expect(sampleLayout(100, 4000).tiles).toEqual([{ x: 0, y: 0, width: 100, height: 4000 }]);
  });

  it('collects each tile from bands of any height into its place in the mosaic', async () => {
    const picture = texturedPicture(1500, 1000);
    const layout = sampleLayout(picture.width, picture.height);
    const source = bandsOf(picture, [7, 64, 1], false);
    const mosaic = await collectSample(source, layout);
    expect(source.closed()).toBe(true);
    layout.tiles.forEach((tile, i) => {
      const expected = cropImage(picture, tile.x, tile.y, tile.width, tile.height);
      const placed = cropImage(mosaic, (i % layout.columns) * SAMPLE_TILE, Math.floor(i / layout.columns) * SAMPLE_TILE, SAMPLE_TILE, SAMPLE_TILE);
      expect(placed.data).toEqual(expected.data);
    });
  });
});
