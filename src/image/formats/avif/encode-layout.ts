import { gridCanvasSize, MIN_GRID_SIDE } from './grid-writer';

/**
 * How an AVIF result is cut into independently encoded tiles. libaom's all-intra encoder holds
 * about 24 bytes a pixel on top of a 16 MB instance (1.2 MP: 45 MB, 12 MP: 344 MB), so results
 * larger than one tile are written as a HEIF grid of tiles that one instance encodes in turn.
 */
export interface AvifLayout {
  columns: number;
  rows: number;
  /** Every tile's size; the right and bottom tiles reach past the image, padded with its edge pixels. */
  tileWidth: number;
  tileHeight: number;
}

/**
 * The largest tile side, by measurement on the 12 MP photo at q80. jSquash's instance stays at its
 * initial 16 MiB up to 512 px tiles (640: 19.25 MiB, 768: 23.1, 1024: 40). Tiles of at most 504 px
 * gave the best SSIM (0.9641 at 1,915,079 bytes; 384: 0.9638, +0.3% bytes; 768: 0.9634, -0.6%;
 * 256: 0.9632, +1.3%; the whole image: 0.9619, +1.5%), and no size showed seams (SSIM beside tile
 * edges at or above the rest of the image). But each tile is one call into libaom that nothing
 * interrupts, and other requests in the isolate wait for it (src/admission/cpu-share.ts): 504 px
 * tiles take 70-80 ms each, 368 px ones 28 ms. 400 px divides the common photo widths (4000, 6000,
 * 8000), so no padded columns are encoded: against 384 px tiles (368 x 376 on the 12 MP photo, 48
 * padded columns), 0.4% fewer bytes on the 12 MP photo and 0.45% on the 24 MP one, at the same
 * PSNR (39.83 and 40.09 dB against 39.83 and 40.06), for 9% more pixels per uninterrupted call.
 */
export const AVIF_MAX_TILE_SIDE = 400;

/**
 * Most items with data a file may have (each tile, the grid, and their alpha twins): libheif's
 * security limit on the `iloc` box, which sharp, libvips and other libheif readers apply (a 48 MP
 * result in 400 px tiles had 301 and sharp refused it).
 */
export const AVIF_MAX_ITEMS = 256;

/**
 * One item when the result is no larger than a tile (the output of today's whole-image encode);
 * otherwise a grid of the fewest tiles per axis no larger than `maxTileSide`, sized to cover the
 * grid's canvas (grid-writer.ts) with as little padding as possible. Where that would be more
 * tiles than AVIF_MAX_ITEMS allows (above about 38 MP, or 19 MP with alpha, whose tiles are
 * twinned), the tiles grow by 8 px steps until it is not.
 */
export function planAvifLayout(width: number, height: number, alpha = false, maxTileSide = AVIF_MAX_TILE_SIDE): AvifLayout {
  if (maxTileSide < MIN_GRID_SIDE || maxTileSide % 8 !== 0) throw new Error(`AVIF tiles of at most ${maxTileSide} px: must be a multiple of 8, at least ${MIN_GRID_SIDE}`);
  if (width * height <= maxTileSide * maxTileSide) return { columns: 1, rows: 1, tileWidth: width, tileHeight: height };
  const canvas = gridCanvasSize(width, height);
  const maxTiles = alpha ? (AVIF_MAX_ITEMS - 2) / 2 : AVIF_MAX_ITEMS - 1;
  for (let side = maxTileSide; ; side += 8) {
    const [columns, tileWidth] = split(canvas.width, side);
    const [rows, tileHeight] = split(canvas.height, side);
    if (columns * rows <= maxTiles) return { columns, rows, tileWidth, tileHeight };
  }
}

/**
 * [count, tile side] along one axis of the grid's canvas. Several tiles per axis are a multiple of
 * 8 px: libaom codes whole 8x8 blocks, and 500 px tiles of the 12 MP photo measured SSIM 0.9591
 * where 504 px tiles gave 0.9641 for 0.9% fewer bytes. One tile per axis is the canvas itself (a
 * tile larger than the grid is refused by the header check, header/avif-items.ts).
 */
function split(canvas: number, maxTileSide: number): [number, number] {
  const count = Math.ceil(canvas / maxTileSide);
  if (count === 1) return [1, canvas];
  const tile = Math.ceil(Math.ceil(canvas / count) / 8) * 8;
  return [Math.ceil(canvas / tile), tile];
}
