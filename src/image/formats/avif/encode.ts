import { AppError } from '../../../errors';
import { trackBuffer } from '../../codecs/wasm-memory';
import { resultTooLarge } from '../../result-buffer';
import type { ResultSink } from '../../result-sink';
import { copyPixels, doWork } from '../../run-context';
import type { RowEncoder, RowSource } from '../../stages/rows';
import { AVIF_MAX_TILE_SIDE, planAvifLayout, type AvifLayout } from './encode-layout';
import { avifSpeedFor, openTileEncoder, type EncodedAv1, type TileEncoder } from './encode-tile';
import { writeAvif, type Av1Items } from './grid-writer';

/**
 * AVIF results of any size on one encoder instance: the rows are gathered one row of tiles at a
 * time (tileHeight rows of the padded width), each tile is encoded as soon as its row is complete,
 * and the container is written around the encoded tiles at the end (grid-writer.ts). A result no
 * larger than one tile is one `av01` item, the same AV1 data today's whole-image encode gives.
 *
 * Quality maps to libavif's quantizer as for a whole image; libaom's speed follows the whole
 * result's pixel count (encode-tile.ts), so a tiled result takes about what one encode of it would.
 */
export const avifEncoder: RowEncoder = avifEncoderWith({});

/** The encoder with another largest tile side (tests use small tiles to make grids of small images). */
export function avifEncoderWith({ maxTileSide = AVIF_MAX_TILE_SIDE }: { maxTileSide?: number }): RowEncoder {
  return {
    placesOrientation: false,
    async encode(source, { quality, orientation, maxBytes = Infinity, effortPixels }, sink) {
      try {
        if (orientation !== 1) throw new Error(`orientation ${orientation} reached an encoder that writes rows as they come`);
        const speed = avifSpeedFor(effortPixels ?? source.width * source.height);
        await encodeAvif(source, { quality, maxBytes, speed }, planAvifLayout(source.width, source.height, source.alpha, maxTileSide), sink);
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw new AppError('CONVERSION_FAILED', 'Encoding the result as AVIF failed.', error);
      } finally {
        source.close();
      }
    },
  };
}

interface AvifSettings {
  quality: number;
  /** libaom's speed (avifSpeedFor the result's size, or the size EncodeOptions.effortPixels gives). */
  speed: number;
  /** Most bytes of AV1 data the tiles may have (the plan's cap; the encoded tiles are what it holds). */
  maxBytes: number;
}

async function encodeAvif(source: RowSource, settings: AvifSettings, layout: AvifLayout, output: ResultSink): Promise<void> {
  const { width, height } = source;
  const tiles = await encodeTiles(source, settings, layout);
  try {
    // The encoder's instance and the row buffers are let go before the file is written around the tiles.
    const { color, alpha } = tiles.finish();
    await writeAvif({ width, height, ...layout, color, alpha }, output);
  } finally {
    tiles.letGo();
  }
}

/** Every tile encoded (the opaque alpha tile included), on an encoder instance that is released after. */
async function encodeTiles(source: RowSource, { quality, maxBytes, speed }: AvifSettings, layout: AvifLayout): Promise<EncodedTiles> {
  const { width, height } = source;
  const encoder = await openTileEncoder({ quality, speed });
  const tiles = new TileCollector(layout, encoder, source.alpha, maxBytes);
  const rows = new TileRowBuffer(layout, width, height);
  const buffers = trackBuffer(rows.pixels.byteLength + tiles.tileBytes);
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      for (let row = 0; row < band.rows; row++) {
        const complete = rows.put(band.y + row, band.data.subarray(row * width * 4, (row + 1) * width * 4));
        if (complete) await tiles.encodeRow(rows.pixels);
      }
    }
    if (!rows.finished) throw new Error(`the source ended after ${rows.received} of ${height} rows`);
    return tiles.complete();
  } catch (error) {
    tiles.letGo();
    throw error;
  } finally {
    buffers();
    encoder.release();
  }
}

/** libaom at speed 9 on 504 px tiles: about 0.3 s a megapixel, more with alpha. */
const TILE_NS_PER_PIXEL = 300;

/**
 * One row of tiles as RGBA, tileHeight rows of columns x tileWidth pixels. The image's last column
 * and row are repeated into the padding: flat padding costs few bits and puts no edge next to the
 * image that the encoder's filters could ring against.
 */
class TileRowBuffer {
  readonly pixels: Uint8Array;
  received = 0;
  private readonly stride: number;

  constructor(
    private readonly layout: AvifLayout,
    private readonly width: number,
    private readonly height: number,
  ) {
    this.stride = layout.columns * layout.tileWidth * 4;
    this.pixels = new Uint8Array(layout.tileHeight * this.stride);
  }

  get finished(): boolean {
    return this.received === this.height;
  }

  /** Stores image row `y` (rows arrive in order); true when it completes a row of tiles. */
  put(y: number, row: Uint8Array): boolean {
    if (y !== this.received) throw new Error(`row ${y} arrived, ${this.received} was due`);
    this.received++;
    const { tileHeight } = this.layout;
    const start = (y % tileHeight) * this.stride;
    this.pixels.set(row, start);
    this.repeatLastPixel(start);
    const last = y === this.height - 1;
    if (last) {
      for (let pad = (y % tileHeight) + 1; pad < tileHeight; pad++) this.pixels.copyWithin(pad * this.stride, start, start + this.stride);
    }
    return last || y % tileHeight === tileHeight - 1;
  }

  private repeatLastPixel(start: number): void {
    const edge = start + (this.width - 1) * 4;
    for (let at = start + this.width * 4; at < start + this.stride; at += 4) this.pixels.copyWithin(at, edge, edge + 4);
  }
}

interface EncodedTiles {
  finish(): { color: Av1Items; alpha: Av1Items | null };
  /** Stops counting the tiles as held (memory-meter.ts). */
  letGo(): void;
}

/**
 * Encodes tiles row by row and keeps their AV1 data, counted as held by the run until let go;
 * alpha only where it is not all opaque.
 */
class TileCollector implements EncodedTiles {
  private readonly color: EncodedAv1[] = [];
  private readonly drops: (() => void)[] = [];
  /** Per tile (when the source may have alpha): its alpha, or null where it is all opaque. */
  private readonly alpha: (EncodedAv1 | null)[] = [];
  private readonly tile: Uint8Array;
  private encodedBytes = 0;

  constructor(
    private readonly layout: AvifLayout,
    private readonly encoder: TileEncoder,
    private readonly hasAlpha: boolean,
    private readonly maxBytes: number,
  ) {
    this.tile = new Uint8Array(layout.tileWidth * layout.tileHeight * 4);
  }

  /** Encodes a row of tiles; each tile is one call into libaom, so other requests may go on between tiles. */
  async encodeRow(rowPixels: Uint8Array): Promise<void> {
    const { columns, tileWidth, tileHeight } = this.layout;
    const stride = columns * tileWidth * 4;
    for (let column = 0; column < columns; column++) {
      copyPixels(() => {
        for (let y = 0; y < tileHeight; y++) {
          const from = y * stride + column * tileWidth * 4;
          this.tile.set(rowPixels.subarray(from, from + tileWidth * 4), y * tileWidth * 4);
        }
      });
      this.color.push(this.held(this.encoder.encodeColor(this.tile, tileWidth, tileHeight)));
      if (this.hasAlpha) this.alpha.push(isOpaque(this.tile) ? null : this.held(this.encoder.encodeAlpha(alphaAsGrey(this.tile), tileWidth, tileHeight)));
      const turn = doWork(tileWidth * tileHeight * TILE_NS_PER_PIXEL);
      if (turn) await turn;
    }
  }

  get tileBytes(): number {
    return this.tile.byteLength;
  }

  private held(tile: EncodedAv1): EncodedAv1 {
    this.encodedBytes += tile.data.byteLength;
    if (this.encodedBytes > this.maxBytes) throw resultTooLarge(this.maxBytes, this.encodedBytes);
    this.drops.push(trackBuffer(tile.data.byteLength));
    return tile;
  }

  /** Encodes what the encoder is still needed for (an opaque alpha tile), so it can be released. */
  complete(): EncodedTiles {
    if (this.alpha.some((tile) => tile !== null) && this.alpha.some((tile) => tile === null)) {
      const opaqueTile = this.encoder.encodeAlpha(this.tile.fill(255), this.layout.tileWidth, this.layout.tileHeight);
      for (let i = 0; i < this.alpha.length; i++) this.alpha[i] ??= this.held(opaqueTile);
    }
    return this;
  }

  /** The colour tiles, and the alpha tiles (opaque ones filled in) unless every pixel is opaque. */
  finish(): { color: Av1Items; alpha: Av1Items | null } {
    const color = sameConfig(this.color);
    if (this.alpha.every((tile) => tile === null)) return { color, alpha: null };
    return { color, alpha: sameConfig(this.alpha as EncodedAv1[]) };
  }

  letGo(): void {
    for (const drop of this.drops.splice(0)) drop();
  }
}

function isOpaque(rgba: Uint8Array): boolean {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return false;
  return true;
}

/** Rewrites the tile in place as R = G = B = alpha, A = 255 (its colour has been encoded already). */
function alphaAsGrey(rgba: Uint8Array): Uint8Array {
  for (let i = 0; i < rgba.length; i += 4) {
    const alpha = rgba[i + 3];
    rgba[i] = alpha;
    rgba[i + 1] = alpha;
    rgba[i + 2] = alpha;
    rgba[i + 3] = 255;
  }
  return rgba;
}

/** Grid tiles must share one decoder configuration (libavif compares their av1C). */
function sameConfig(tiles: EncodedAv1[]): Av1Items {
  const config = tiles[0].config;
  for (const tile of tiles) {
    if (tile.config.length !== config.length || tile.config.some((byte, i) => byte !== config[i])) {
      throw new Error('AVIF tiles were encoded with different AV1 configurations');
    }
  }
  return { config, tiles: tiles.map((tile) => tile.data) };
}
