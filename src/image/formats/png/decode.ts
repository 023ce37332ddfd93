import { damaged } from '../../bytes';
import type { Region } from '../../operations';
import type { Band, DecodeOptions, RowSource } from '../../stages/rows';
import { rowExpander } from './expand';
import { pngChunks, type PngHeader } from './header';
import { InflatedStream } from './inflate';
import { bitsPerPixel, GREY, GREY_ALPHA, PALETTE, passes, RGBA, rowBytes, type Pass } from './structure';
import { unfilterRow } from './unfilter';

/*
 * PNG decoding in bands: the image data is inflated by the platform's zlib (inflate.ts) as rows
 * are needed, each row unfiltered against the one before it and expanded to RGBA into the band.
 * A plain image holds two rows and the band. An Adam7 image interleaves seven reduced images
 * that lie one after the other in the stream, so instead of inflating everything into a frame,
 * each pass gets its own inflater that skips the passes before it: every image row then takes
 * the next row of the passes that cover it. The stream is inflated about twice over (the pass
 * offsets sum to 63/64 of the data), for memory that stays at seven inflaters and rows.
 */

export const PNG_BAND_ROWS = 16;

/** Opens a band decode of the image (or `options.region` of it), in bands of `bandRows` (tests show it changes nothing but the bands). */
export async function openPng(input: Uint8Array, png: PngHeader, options: DecodeOptions, bandRows = PNG_BAND_ROWS): Promise<RowSource> {
  if (options.shrink !== 1) throw new Error(`png: shrink ${options.shrink} is not supported`);
  if (png.colourType === PALETTE) {
    if (png.palette === null) throw damaged('png: palette image without PLTE');
    if (png.palette.length === 0 || png.palette.length % 3 !== 0 || png.palette.length > 768) throw damaged(`png: PLTE of ${png.palette.length} bytes`);
  }
  const imageData = () => idatPayloads(input, png.imageData);
  if (imageData().next().done) throw damaged('png: no image data');
  const region = options.region ?? { x: 0, y: 0, width: png.width, height: png.height };
  checkRegion(region, png);
  return new PngRows(png, imageData, region, bandRows);
}

/** The data of the run of consecutive IDAT chunks from `first` (APNG's fdAT are frames after it), empty ones skipped. */
function* idatPayloads(bytes: Uint8Array, first: number): Generator<Uint8Array> {
  if (first < 0) return;
  for (const chunk of pngChunks(bytes, first)) {
    if (chunk.type !== 'IDAT') return;
    if (chunk.length > 0) yield bytes.subarray(chunk.data, chunk.data + chunk.length);
  }
}

function checkRegion(region: Region, png: PngHeader): void {
  const { x, y, width, height } = region;
  const inside = [x, y, width, height].every(Number.isInteger) && x >= 0 && y >= 0 && width > 0 && height > 0;
  if (!inside || x + width > png.width || y + height > png.height) {
    throw new Error(`png: region ${width}x${height} at ${x},${y} outside the ${png.width}x${png.height} image`);
  }
}

/** The rows of one pass, inflated and unfiltered one at a time. */
class PassRows {
  private stream: InflatedStream | null = null;
  private row: Uint8Array;
  private prior: Uint8Array;
  private rowsRead = 0;
  private readonly bpp: number;

  constructor(
    private readonly png: PngHeader,
    private readonly imageData: () => Iterator<Uint8Array>,
    readonly pass: Pass,
  ) {
    this.row = new Uint8Array(1 + rowBytes(png, pass.width));
    this.prior = new Uint8Array(this.row.length);
    this.bpp = Math.max(1, bitsPerPixel(png) >> 3);
  }

  /** The pass's next row, unfiltered, its filter byte at 0; valid until the next call. */
  async next(): Promise<Uint8Array> {
    if (this.stream === null) {
      this.stream = new InflatedStream(this.imageData);
      if (!(await this.stream.skip(this.pass.offset))) throw rowsMissing();
    }
    [this.row, this.prior] = [this.prior, this.row];
    if (!(await this.stream.fill(this.row))) throw rowsMissing();
    unfilterRow(this.row, this.prior, this.bpp);
    if (++this.rowsRead === this.pass.height) this.close();
    return this.row;
  }

  heldBytes(): number {
    return this.row.length + this.prior.length + (this.stream?.heldBytes() ?? 0);
  }

  close(): void {
    this.stream?.close();
  }
}

function rowsMissing() {
  return damaged('png: the image data ends before the last row');
}

class PngRows implements RowSource {
  readonly width: number;
  readonly height: number;
  readonly model = 'rgba' as const;
  readonly alpha: boolean;
  readonly grey: boolean;
  private readonly passes: PassRows[];
  private readonly expand;
  private band: Uint8Array | null;
  private readonly words: Int32Array;
  /** Next image row to decode (rows above the region are decoded too: the filters chain them). */
  private y = 0;
  private closed = false;

  constructor(
    png: PngHeader,
    imageData: () => Iterator<Uint8Array>,
    private readonly region: Region,
    private readonly bandRows: number,
  ) {
    this.width = region.width;
    this.height = region.height;
    this.alpha = png.colourType === GREY_ALPHA || png.colourType === RGBA || png.transparency !== null;
    this.grey = png.colourType === GREY || png.colourType === GREY_ALPHA;
    this.passes = passes(png)
      .filter((pass) => pass.width > 0 && pass.height > 0)
      .map((pass) => new PassRows(png, imageData, pass));
    this.expand = rowExpander(png);
    this.band = new Uint8Array(Math.min(bandRows, region.height) * region.width * 4);
    this.words = new Int32Array(this.band.buffer);
  }

  async read(): Promise<Band | null> {
    const end = this.region.y + this.region.height;
    if (this.closed || this.y >= end) {
      this.close();
      return null;
    }
    try {
      while (this.y < this.region.y) await this.decodeRow(-1);
      const first = this.y;
      const rows = Math.min(this.bandRows, end - first);
      for (let i = 0; i < rows; i++) await this.decodeRow(i);
      if (this.y === end) for (const pass of this.passes) pass.close();
      return { y: first - this.region.y, rows, data: this.band!.subarray(0, rows * this.width * 4) };
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Decodes image row `this.y` into band row `bandRow` (-1: above the region, decoded only for the rows after it). */
  private async decodeRow(bandRow: number): Promise<void> {
    const y = this.y++;
    const { x, width } = this.region;
    for (const rows of this.passes) {
      const { x0, y0, dx, dy } = rows.pass;
      if (y < y0 || (y - y0) % dy !== 0) continue;
      const row = await rows.next();
      if (bandRow < 0) continue;
      // The pass's pixels inside columns [x, x + width).
      const firstPixel = Math.max(0, Math.ceil((x - x0) / dx));
      const lastPixel = Math.min(rows.pass.width - 1, Math.floor((x + width - 1 - x0) / dx));
      if (lastPixel < firstPixel) continue;
      this.expand(row, firstPixel, lastPixel - firstPixel + 1, this.words, bandRow * width + x0 + firstPixel * dx - x, dx);
    }
  }

  heldBytes(): number {
    if (this.closed) return 0;
    return (this.band?.byteLength ?? 0) + this.passes.reduce((sum, pass) => sum + pass.heldBytes(), 0);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pass of this.passes) pass.close();
    this.band = null;
  }
}
