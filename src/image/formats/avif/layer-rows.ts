import { damaged } from '../../bytes';
import { show, type Av1Image, type AvifLayer } from './container';
import { LAYOUT_I400, LAYOUT_I420, type Dav1dCodec, type DecodedPicture, type PictureFormat, type Samples, type WindowState } from './dav1d';
import { unsupportedAvif } from './limits';

/** A row of one plane: its samples start at `at`. */
export interface PlaneRow {
  samples: Samples;
  at: number;
}

/**
 * The decoded rows of one layer (the colour image or the alpha plane), asked for top to bottom.
 * A single image is decoded whole when opened; a grid one row of tiles at a time, when its rows are
 * first asked for, and its tiles are released once `dropBefore` says their rows are done, so at most
 * two rows of tiles (the bilinear chroma filter reads one chroma row across a tile edge) are held.
 */
export interface LayerRows {
  readonly format: PictureFormat;
  /** Row `y` of plane `plane` (0 = Y, 1 = U, 2 = V; chroma rows counted in chroma resolution). */
  row(plane: 0 | 1 | 2, y: number): PlaneRow;
  /** Decodes what `row(plane, y)` will need, letting other requests go on meanwhile (a grid's tiles); undefined when it is there. */
  prepare(plane: 0 | 1 | 2, y: number): Promise<void> | undefined;
  /** Rows of luma row index below `y` (and chroma rows they alone use) will not be asked for again. */
  dropBefore(y: number): void;
  /** JavaScript bytes held (row scratch); the pictures are in wasm memory. */
  heldBytes(): number;
}

/**
 * Opens the rows of `layer`, decoding what the first of the rows from `firstRow` on needs: a single
 * image whole (letting other runs go on while dav1d works) or, `windowed`, into a window of rows as
 * they are asked for; a grid its first row of tiles, of those that hold the columns `columns`
 * covers (and the chroma sample beside them: a region of a grid decodes only its own tiles).
 */
export async function openLayerRows(
  codec: Dav1dCodec,
  file: Uint8Array,
  layer: AvifLayer,
  what: string,
  firstRow: number,
  windowed = false,
  columns: { x: number; width: number } = { x: 0, width: layer.size.width },
): Promise<LayerRows> {
  if (layer.grid) {
    const { tileWidth } = layer.grid;
    const first = Math.floor(Math.max(0, columns.x - 2) / tileWidth);
    const last = Math.floor(Math.min(layer.size.width - 1, columns.x + columns.width + 1) / tileWidth);
    const rows = new GridRows(codec, file, layer, what, first, Math.min(last, layer.grid.columns - 1));
    await rows.prepare(0, Math.max(0, firstRow - 1));
    return rows;
  }
  const image = layer.tiles[0];
  const picture = codec.createPicture();
  if (windowed) {
    const rows = new WindowedRows(codec, file, image, picture, what);
    await rows.prepare(0, firstRow);
    return rows;
  }
  await codec.decodeYielding(file, image.ranges, picture, `${what} ${image.id}`);
  return new SingleImageRows(codec, picture, checkedFormat(image, picture, what));
}

function decodeImage(codec: Dav1dCodec, file: Uint8Array, image: Av1Image, picture: DecodedPicture, what: string): PictureFormat {
  codec.decode(file, image.ranges, picture, `${what} ${image.id}`);
  return checkedFormat(image, picture, what);
}

function checkedFormat(image: Av1Image, picture: DecodedPicture, what: string): PictureFormat {
  const format = picture.format;
  if (format.width !== image.size.width || format.height !== image.size.height) {
    throw damaged(`avif: ${what} ${image.id} declares ${show(image.size)} and decodes to ${format.width}x${format.height}`);
  }
  return format;
}

class SingleImageRows implements LayerRows {
  private buffer: ArrayBuffer | null = null;
  private planes: { samples: Samples; stride: number }[] = [];

  constructor(
    private readonly codec: Dav1dCodec,
    private readonly picture: DecodedPicture,
    readonly format: PictureFormat,
  ) {}

  row(plane: 0 | 1 | 2, y: number): PlaneRow {
    // Views are taken again only when a later decode (the alpha image) grew the wasm memory.
    if (this.buffer !== this.codec.memoryBuffer()) {
      this.buffer = this.codec.memoryBuffer();
      const chroma = this.format.layout !== LAYOUT_I400;
      this.planes = [this.picture.plane(0), ...(chroma ? [this.picture.plane(1), this.picture.plane(2)] : [])];
    }
    const { samples, stride } = this.planes[plane];
    return { samples, at: y * stride };
  }

  prepare(): undefined {
    return undefined;
  }

  dropBefore(): void {}

  heldBytes(): number {
    return 0;
  }
}

/**
 * A single image decoded into a window of rows (Dav1dCodec.decodeWindowed): dav1d runs at most a
 * row of superblocks ahead of the rows asked for, and at each row of superblocks waits until a row
 * past its ready ones is asked for; the rows before that are read from its buffer meanwhile.
 * (A 24 MP 10-bit frame is 72 MB whole; its window 3.5 MB.)
 */
class WindowedRows implements LayerRows {
  format!: PictureFormat;
  private state: WindowState | null = null;
  private subsampleY = 0;
  /** A row asked for past the ready ones: the luma rows it needs. */
  private waiting: { rows: number; resolve: () => void; reject: (error: unknown) => void } | null = null;
  /** Lets the decode go on from the yield point where it waits. */
  private resume: (() => void) | null = null;
  private failure: unknown = null;
  private finished = false;
  private views: { buffer: ArrayBuffer; planes: Samples[] } | null = null;

  constructor(
    private readonly codec: Dav1dCodec,
    file: Uint8Array,
    private readonly image: Av1Image,
    picture: DecodedPicture,
    what: string,
  ) {
    codec.decodeWindowed(file, image.ranges, picture, `${what} ${image.id}`, (state) => this.rowsReady(state)).then(
      () => {
        this.finished = true;
        this.settle();
      },
      (error: unknown) => {
        this.failure = error;
        this.settle();
      },
    );
  }

  private rowsReady(state: WindowState): Promise<void> | undefined {
    if (!this.state) {
      const { width, height } = state.format;
      if (width !== this.image.size.width || height !== this.image.size.height) {
        this.failure = damaged(`avif: image ${this.image.id} declares ${show(this.image.size)} and decodes to ${width}x${height}`);
      }
      this.format = state.format;
      this.subsampleY = state.format.layout === LAYOUT_I420 ? 1 : 0;
    }
    this.state = state;
    this.settle();
    // A row further down is already asked for (a crop's first), or these are the last rows: go on.
    if (this.waiting || this.failure || state.ready >= state.format.height) return undefined;
    return new Promise((resolve) => (this.resume = resolve));
  }

  private settle(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    if (this.failure) {
      this.waiting = null;
      waiting.reject(this.failure);
    } else if ((this.state && this.state.ready >= waiting.rows) || this.finished) {
      this.waiting = null;
      if (this.state) waiting.resolve();
      else waiting.reject(damaged(`avif: image ${this.image.id} decoded to no rows`));
    }
  }

  /** Luma rows that must be final for row `y` of `plane`. */
  private lumaRowsFor(plane: 0 | 1 | 2, y: number): number {
    if (plane === 0 || !this.state) return y + 1;
    return Math.min(this.format.height, (y + 1) << this.subsampleY);
  }

  prepare(plane: 0 | 1 | 2, y: number): Promise<void> | undefined {
    const rows = this.lumaRowsFor(plane, y);
    if (this.state && !this.failure && rows <= this.state.ready) return undefined;
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.waiting = { rows, resolve, reject };
      const resume = this.resume;
      this.resume = null;
      resume?.();
      this.settle();
    });
  }

  row(plane: 0 | 1 | 2, y: number): PlaneRow {
    const state = this.state!;
    const buffer = this.codec.memoryBuffer();
    const wide = this.format.bitDepth > 8;
    if (this.views?.buffer !== buffer) {
      // Views from each plane's place in the buffer to the memory's end, taken again after it grows.
      const view = (address: number): Samples => (wide ? new Uint16Array(buffer, address, (buffer.byteLength - address) >> 1) : new Uint8Array(buffer, address));
      this.views = { buffer, planes: state.planes.map((address) => (address ? view(address) : new Uint8Array(0))) };
    }
    const chroma = plane !== 0;
    const top = chroma ? state.top >> this.subsampleY : state.top;
    if (y < top || this.lumaRowsFor(plane, y) > state.ready) throw new Error(`avif: row ${y} of plane ${plane} is not in the window (${state.top}..${state.ready})`);
    const stride = state.strides[chroma ? 1 : 0] >> (wide ? 1 : 0);
    return { samples: this.views.planes[plane], at: (y - top) * stride };
  }

  dropBefore(): void {}

  heldBytes(): number {
    return 0;
  }
}

/**
 * A grid's rows, assembled from its tiles: each row asked for is copied from the tiles of its row of
 * tiles into a full-width row (the output width: the right and bottom tiles reach past the output
 * and are cut), which is what libavif's grid reconstruction then converts, chroma filter included.
 */
class GridRows implements LayerRows {
  format!: PictureFormat;
  private readonly grid: NonNullable<AvifLayer['grid']>;
  /** Decoded rows of tiles by tile-row index (at most two at a time), by column (firstColumn to lastColumn only). */
  private readonly tileRows = new Map<number, DecodedPicture[]>();
  private readonly spare: DecodedPicture[] = [];
  /** Two assembled rows per plane (a chroma row and its neighbour alternate by parity). */
  private readonly assembled: { y: number; row: Samples }[][] = [[], [], []];
  private subsampleX = 0;
  private subsampleY = 0;
  /** Rows of tiles decoded so far (a row decoded twice counts twice). */
  decodedRows = 0;

  constructor(
    private readonly codec: Dav1dCodec,
    private readonly file: Uint8Array,
    private readonly layer: AvifLayer,
    private readonly what: string,
    /** The columns of tiles rows are assembled from: the others are never decoded. */
    private readonly firstColumn = 0,
    private readonly lastColumn = layer.grid!.columns - 1,
  ) {
    this.grid = layer.grid!;
  }

  private complete(pictures: DecodedPicture[] | undefined): boolean {
    if (!pictures) return false;
    for (let column = this.firstColumn; column <= this.lastColumn; column++) if (!pictures[column]) return false;
    return true;
  }

  /**
   * The pictures of tile row `index`, decoded on first use. Rows of tiles above it are released
   * first: the rows they still serve are already assembled (see `row`), so only one row of tiles is
   * held at a time.
   */
  private tiles(index: number): DecodedPicture[] {
    const pictures = this.tileRows.get(index) ?? this.startTileRow(index);
    for (let column = this.firstColumn; column <= this.lastColumn; column++) {
      if (pictures[column]) continue;
      const image = this.layer.tiles[index * this.grid.columns + column];
      this.checkFormat(decodeImage(this.codec, this.file, image, this.nextPicture(pictures, column), `${this.what} grid tile`));
    }
    return pictures;
  }

  /** `tiles(index)` ahead of time, each tile decoded with dav1d's yield points (a 512 px tile takes ~20 ms). */
  private async decodeTiles(index: number): Promise<void> {
    const pictures = this.tileRows.get(index) ?? this.startTileRow(index);
    for (let column = this.firstColumn; column <= this.lastColumn; column++) {
      if (pictures[column]) continue;
      const image = this.layer.tiles[index * this.grid.columns + column];
      const picture = this.nextPicture(pictures, column);
      await this.codec.decodeYielding(this.file, image.ranges, picture, `${this.what} grid tile ${image.id}`);
      this.checkFormat(checkedFormat(image, picture, this.what));
    }
  }

  private startTileRow(index: number): DecodedPicture[] {
    for (const above of this.tileRows.keys()) if (above < index) this.release(above);
    const pictures: DecodedPicture[] = [];
    this.tileRows.set(index, pictures);
    this.decodedRows++;
    return pictures;
  }

  private nextPicture(pictures: DecodedPicture[], column: number): DecodedPicture {
    const picture = this.spare.pop() ?? this.codec.createPicture();
    pictures[column] = picture;
    return picture;
  }

  /**
   * Assembles what row(plane, y) will return, decoding its row of tiles first when needed (with
   * yield points): both chroma planes at once, as convertRow asks for them, so that no row of
   * tiles is released while a row it serves is still to be assembled.
   */
  prepare(plane: 0 | 1 | 2, y: number): Promise<void> | undefined {
    const planes: (0 | 1 | 2)[] = plane === 0 ? [0] : [1, 2];
    if (planes.every((p) => this.assembled[p][y & 1]?.y === y)) return undefined;
    const chroma = plane !== 0 && this.format !== undefined && this.format.layout !== LAYOUT_I400;
    const index = Math.floor(y / (this.grid.tileHeight >> (chroma ? this.subsampleY : 0)));
    const assemble = () => {
      for (const p of planes) this.row(p, y);
    };
    if (this.complete(this.tileRows.get(index))) return void assemble();
    return this.decodeTiles(index).then(assemble);
  }

  private release(index: number): void {
    for (const picture of this.tileRows.get(index) ?? []) {
      if (!picture) continue;
      picture.release();
      this.spare.push(picture);
    }
    this.tileRows.delete(index);
  }

  /** Every tile must decode to the first tile's format; subsampled planes need even tile sizes. */
  private checkFormat(format: PictureFormat): void {
    if (!this.format) {
      this.format = { ...format, width: this.layer.size.width, height: this.layer.size.height };
      this.subsampleX = format.layout === LAYOUT_I420 || format.layout === 2 ? 1 : 0;
      this.subsampleY = format.layout === LAYOUT_I420 ? 1 : 0;
      const { tileWidth, tileHeight } = this.grid;
      if ((this.subsampleX && tileWidth % 2 === 1) || (this.subsampleY && tileHeight % 2 === 1)) {
        throw unsupportedAvif('grid tiles of odd size with subsampled chroma');
      }
      return;
    }
    const first = this.format;
    if (format.bitDepth !== first.bitDepth || format.layout !== first.layout || format.matrix !== first.matrix || format.fullRange !== first.fullRange) {
      throw damaged(`avif: ${this.what} grid tiles differ in format`);
    }
  }

  row(plane: 0 | 1 | 2, y: number): PlaneRow {
    const cache = this.assembled[plane];
    const slot = cache[y & 1];
    if (slot && slot.y === y) return { samples: slot.row, at: 0 };
    const chroma = plane !== 0 && this.format.layout !== LAYOUT_I400;
    const shiftX = chroma ? this.subsampleX : 0;
    const shiftY = chroma ? this.subsampleY : 0;
    const tileWidth = this.grid.tileWidth >> shiftX;
    const tileHeight = this.grid.tileHeight >> shiftY;
    const width = (this.layer.size.width + shiftX) >> shiftX;
    const pictures = this.tiles(Math.floor(y / tileHeight));
    const within = y % tileHeight;
    let row = slot?.row;
    if (!row || row.length < width) row = this.format.bitDepth === 8 ? new Uint8Array(width) : new Uint16Array(width);
    for (let column = this.firstColumn; column <= this.lastColumn && column * tileWidth < width; column++) {
      const { samples, stride } = pictures[column].plane(plane);
      const length = Math.min(tileWidth, width - column * tileWidth);
      row.set(samples.subarray(within * stride, within * stride + length), column * tileWidth);
    }
    cache[y & 1] = { y, row };
    return { samples: row, at: 0 };
  }

  dropBefore(y: number): void {
    // Output row y may still read the chroma row above it, in the previous row of tiles.
    const first = Math.floor(Math.max(0, y - 2) / this.grid.tileHeight);
    for (const index of this.tileRows.keys()) if (index < first) this.release(index);
  }

  heldBytes(): number {
    let bytes = 0;
    for (const slots of this.assembled) for (const slot of slots) if (slot) bytes += slot.row.byteLength;
    return bytes;
  }
}
