import type { Region } from '../operations';
import { applyOrientation, storedRegion } from '../stages/orient';
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

/**
 * The mosaic read a tile at a time: `open(region)` gives each tile's rows (a decoder that decodes a
 * region's own coded tiles only, an AVIF grid's), each closed once its tile is placed.
 */
export async function collectTiles(open: (region: Region) => Promise<RowSource>, layout: SampleLayout): Promise<RgbaImage & { data: Uint8Array }> {
  const mosaic = layout.size;
  const data = new Uint8Array(mosaic.width * mosaic.height * 4);
  for (const [i, tile] of layout.tiles.entries()) {
    const x = (i % layout.columns) * tile.width;
    const y = Math.floor(i / layout.columns) * tile.height;
    const source = await open(tile);
    try {
      for (let band = await source.read(); band; band = await source.read()) {
        for (let row = 0; row < band.rows; row++) {
          data.set(band.data.subarray(row * tile.width * 4, (row + 1) * tile.width * 4), ((y + band.y + row) * mosaic.width + x) * 4);
        }
      }
    } finally {
      source.close();
    }
  }
  return { data, width: mosaic.width, height: mosaic.height };
}

/** Bytes the mosaic takes (RGBA). */
export function sampleBytes(layout: SampleLayout): number {
  return layout.size.width * layout.size.height * 4;
}

/**
 * Reads `source` to its end (closing it) and returns the mosaic of its tiles. The layout is in the
 * picture as shown; `source` may hold its stored rows with the EXIF `orientation` still to apply
 * (an encoder that places the rows itself): each tile is then read from its stored region and
 * turned, so the mosaic is what the result will show (its tiles are small: no frame is needed).
 */
export async function collectSample(source: RowSource, layout: SampleLayout, orientation = 1): Promise<RgbaImage & { data: Uint8Array }> {
  const { width } = source;
  const mosaic = layout.size;
  const data = new Uint8Array(mosaic.width * mosaic.height * 4);
  const placed = layout.tiles.map((tile, i) => {
    const stored = storedRegion(tile, orientation, { width: source.width, height: source.height });
    // Orientation 1 copies straight into the mosaic; any other into the stored tile, turned at the end.
    const buffer = orientation === 1 ? null : new Uint8Array(stored.width * stored.height * 4);
    return { tile, stored, buffer, x: (i % layout.columns) * tile.width, y: Math.floor(i / layout.columns) * tile.height };
  });
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      for (const { stored, buffer, x, y } of placed) {
        const from = Math.max(band.y, stored.y);
        const to = Math.min(band.y + band.rows, stored.y + stored.height);
        for (let row = from; row < to; row++) {
          const start = ((row - band.y) * width + stored.x) * 4;
          const pixels = band.data.subarray(start, start + stored.width * 4);
          if (buffer) buffer.set(pixels, (row - stored.y) * stored.width * 4);
          else data.set(pixels, ((y + row - stored.y) * mosaic.width + x) * 4);
        }
      }
    }
  } finally {
    source.close();
  }
  for (const { tile, stored, buffer, x, y } of placed) {
    if (!buffer) continue;
    const turned = applyOrientation({ data: buffer, width: stored.width, height: stored.height }, orientation).data;
    for (let row = 0; row < tile.height; row++) data.set(turned.subarray(row * tile.width * 4, (row + 1) * tile.width * 4), ((y + row) * mosaic.width + x) * 4);
  }
  return { data, width: mosaic.width, height: mosaic.height };
}
