import type { Region } from '../operations';
import type { RowSource } from '../stages/rows';
import type { Dimensions, RgbaImage } from '../types';

/*
 * The picture the quality is predicted on: tiles spread evenly across the encoder's input, put side
 * by side into one small picture (a mosaic), collected as the rows stream past. Tiles start on
 * multiples of 16 pixels, so a JPEG's blocks and macroblocks in the mosaic hold the same pixels as
 * in the whole picture. A picture not much larger than the mosaic is its own sample.
 */

/** Side of a tile. */
export const SAMPLE_TILE = 128;
/** Tiles across and down. */
export const SAMPLE_GRID = 4;
const ALIGN = 16;

export interface SampleLayout {
  /** The mosaic's size. */
  size: Dimensions;
  /** Each tile's place in the picture; tile i sits at column i % columns, row floor(i / columns) of the mosaic. */
  tiles: Region[];
  columns: number;
}

/** Where the tiles of a `width` x `height` picture come from: the whole picture when that is no more than twice the mosaic. */
export function sampleLayout(width: number, height: number, tile = SAMPLE_TILE, grid = SAMPLE_GRID): SampleLayout {
  const across = Math.min(grid, Math.floor(width / tile));
  const down = Math.min(grid, Math.floor(height / tile));
  if (across < 2 || down < 2 || width * height <= 2 * across * down * tile * tile) {
    return { size: { width, height }, tiles: [{ x: 0, y: 0, width, height }], columns: 1 };
  }
  const starts = (length: number, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const centred = Math.round(((i + 0.5) * length) / count - tile / 2);
      return Math.min(length - tile, Math.max(0, Math.floor(centred / ALIGN) * ALIGN));
    });
  const xs = starts(width, across);
  const ys = starts(height, down);
  const tiles: Region[] = [];
  for (const y of ys) for (const x of xs) tiles.push({ x, y, width: tile, height: tile });
  return { size: { width: across * tile, height: down * tile }, tiles, columns: across };
}

/** Bytes the mosaic takes (RGBA). */
export function sampleBytes(layout: SampleLayout): number {
  return layout.size.width * layout.size.height * 4;
}

/** Reads `source` to its end (closing it) and returns the mosaic of its tiles. */
export async function collectSample(source: RowSource, layout: SampleLayout): Promise<RgbaImage & { data: Uint8Array }> {
  const { width } = source;
  const mosaic = layout.size;
  const data = new Uint8Array(mosaic.width * mosaic.height * 4);
  const placed = layout.tiles.map((tile, i) => ({ tile, x: (i % layout.columns) * tile.width, y: Math.floor(i / layout.columns) * tile.height }));
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      for (const { tile, x, y } of placed) {
        const from = Math.max(band.y, tile.y);
        const to = Math.min(band.y + band.rows, tile.y + tile.height);
        for (let row = from; row < to; row++) {
          const start = ((row - band.y) * width + tile.x) * 4;
          data.set(band.data.subarray(start, start + tile.width * 4), ((y + row - tile.y) * mosaic.width + x) * 4);
        }
      }
    }
  } finally {
    source.close();
  }
  return { data, width: mosaic.width, height: mosaic.height };
}
