import type { Region } from '../../operations';
import type { Band, DecodeOptions, RowSource } from '../../stages/rows';
import type { AvifContainer } from './container';
import { Dav1dCodec, LAYOUT_I400, type Samples } from './dav1d';
import type { AvifHeader } from './header';
import { openLayerRows, type LayerRows } from './layer-rows';
import { windowable } from './memory';
import { AlphaTable, YuvToRgb, type ChromaUpsampling, type RowSamples } from './yuv-to-rgb';

export interface AvifDecoderOptions {
  /** Rows per band handed out (the last band may be shorter). */
  bandRows?: number;
  upsampling?: ChromaUpsampling;
}

/** Rows per band: 16 rows of a 12 MP photo are 256 KB of RGBA. */
export const AVIF_BAND_ROWS = 16;

/**
 * AVIF decoding into bands: the container as the header parsed it, AV1 frames decoded by dav1d in
 * WebAssembly (one fresh instance per file), YUV converted to RGBA a band at a time as libavif
 * converts (yuv-to-rgb.ts). Rows are in stored orientation (irot/imir are the pipeline's EXIF
 * orientation), cropped to the clean aperture (`clap`) and then to `region`. Colour profiles (ICC
 * or nclx primaries and transfer) are left to the pipeline's colour stage.
 */
export async function openAvif(input: Uint8Array, { container }: AvifHeader, { region, rowWindow }: DecodeOptions, options: AvifDecoderOptions = {}): Promise<RowSource> {
  const shown = region ?? { x: 0, y: 0, ...container.size };
  checkRegion(shown, container);
  const coded = { ...shown, x: shown.x + (container.crop?.x ?? 0), y: shown.y + (container.crop?.y ?? 0) };
  // A windowed decode keeps its instance's stack until its last row, so a windowed alpha image has
  // an instance of its own.
  const windowed = rowWindow === true && windowable(container);
  const codec = await Dav1dCodec.open(largestImagePixels(container));
  const codecs = [codec];
  try {
    const alphaCodec = windowed && container.alpha ? await Dav1dCodec.open(largestImagePixels(container)) : codec;
    if (alphaCodec !== codec) codecs.push(alphaCodec);
    const alpha = container.alpha && (await openLayerRows(alphaCodec, input, container.alpha, 'alpha image', coded.y, windowed, coded));
    const color = await openLayerRows(codec, input, container.color, 'image', coded.y, windowed, coded);
    return new AvifRows(container, coded, codecs, options.bandRows ?? AVIF_BAND_ROWS, options.upsampling ?? 'bilinear', color, alpha);
  } catch (error) {
    for (const opened of codecs) opened.close();
    throw error;
  }
}

/** dav1d's frame size limit: the largest image the file declares (a grid's tile, not the grid). */
function largestImagePixels(container: AvifContainer): number {
  let largest = 0;
  for (const layer of [container.color, container.alpha]) {
    for (const image of layer?.tiles ?? []) largest = Math.max(largest, image.size.width * image.size.height);
  }
  return largest;
}

function checkRegion(region: Region, container: AvifContainer): void {
  const { width, height } = container.size;
  if (region.x < 0 || region.y < 0 || region.width <= 0 || region.height <= 0 || region.x + region.width > width || region.y + region.height > height) {
    throw new Error(`avif: region ${JSON.stringify(region)} outside the ${width}x${height} image`);
  }
}

class AvifRows implements RowSource {
  readonly width: number;
  readonly height: number;
  readonly model = 'rgba' as const;
  readonly alpha: boolean;
  readonly grey: boolean;
  private readonly color: LayerRows;
  private readonly alphaRows: LayerRows | null;
  private readonly conversion: YuvToRgb;
  private readonly alphaTable: AlphaTable | null;
  private readonly premultiplied: boolean;
  private readonly samples: RowSamples;
  private band: Uint8Array;
  /** The band as RGBA words, which the conversion writes. */
  private words: Uint32Array;
  private alphaUnits: Float64Array;
  /** Next row to hand out, counted from the region's top. */
  private next = 0;
  private closed = false;

  constructor(
    container: AvifContainer,
    private readonly region: Region,
    private readonly codecs: Dav1dCodec[],
    private readonly bandRows: number,
    upsampling: ChromaUpsampling,
    color: LayerRows,
    alphaRows: LayerRows | null,
  ) {
    this.width = region.width;
    this.height = region.height;
    this.color = color;
    this.alphaRows = alphaRows;
    const format = this.color.format;
    const nclx = container.nclx;
    this.conversion = new YuvToRgb({ ...format, matrix: nclx?.matrix ?? format.matrix, fullRange: nclx?.fullRange ?? format.fullRange }, upsampling);
    this.alpha = this.alphaRows !== null;
    this.grey = format.layout === LAYOUT_I400;
    this.alphaTable = this.alphaRows && new AlphaTable(this.alphaRows.format.bitDepth, this.alphaRows.format.fullRange);
    this.premultiplied = container.premultiplied && this.alphaRows !== null;
    const luma = this.color.row(0, region.y);
    this.samples = { y: luma.samples, yAt: 0, u0: luma.samples, u0At: 0, u1: luma.samples, u1At: 0, v0: luma.samples, v0At: 0, v1: luma.samples, v1At: 0 };
    this.band = new Uint8Array(Math.min(bandRows, this.height) * this.width * 4);
    this.words = new Uint32Array(this.band.buffer);
    this.alphaUnits = new Float64Array(this.premultiplied ? this.width : 0);
  }

  async read(): Promise<Band | null> {
    if (this.closed) return null;
    if (this.next >= this.height) {
      this.close();
      return null;
    }
    const rows = Math.min(this.bandRows, this.height - this.next);
    const data = this.band.subarray(0, rows * this.width * 4);
    for (let i = 0; i < rows; i++) {
      const y = this.region.y + this.next + i;
      for (const [plane, row] of this.planeRows(y)) {
        const decoding = this.color.prepare(plane, row);
        if (decoding) await decoding;
      }
      const decodingAlpha = this.alphaRows?.prepare(0, y);
      if (decodingAlpha) await decodingAlpha;
      this.convertRow(y, i * this.width);
    }
    const band = { y: this.next, rows, data };
    this.next += rows;
    this.color.dropBefore(this.region.y + this.next);
    this.alphaRows?.dropBefore(this.region.y + this.next);
    return band;
  }

  /** The plane rows convertRow(y) asks for, in its order (planeRows and convertRow must agree). */
  private planeRows(y: number): [0 | 1 | 2, number][] {
    if (this.conversion.mode === 'mono') return [[0, y]];
    const [c0, c1] = this.conversion.chromaRows(y, this.color.format.height);
    return [...(c1 < c0 ? [[1, c1] as [1, number]] : []), [1, c0], [0, y], ...(c1 > c0 ? [[1, c1] as [1, number]] : [])];
  }

  /** Converts coded row `y` into the band from pixel `at` on. */
  private convertRow(y: number, at: number): void {
    const { conversion, samples, color } = this;
    const { x, width } = this.region;
    const imageWidth = color.format.width;
    // Rows are asked for in the order they lie in the file (the chroma row above, luma, the chroma
    // row below): a grid then never needs a row of tiles it has already released.
    if (conversion.mode === 'mono') {
      this.setLuma(y);
    } else {
      const [c0, c1] = conversion.chromaRows(y, color.format.height);
      const above = c1 < c0 ? this.chromaRow(c1) : null;
      const nearest = this.chromaRow(c0);
      this.setLuma(y);
      const neighbour = above ?? (c1 > c0 ? this.chromaRow(c1) : nearest);
      [samples.u0, samples.u0At, samples.v0, samples.v0At] = nearest;
      [samples.u1, samples.u1At, samples.v1, samples.v1At] = neighbour;
    }
    const alpha = this.alphaRows && this.alphaRows.row(0, y);
    if (this.premultiplied && alpha) {
      const units = this.alphaTable!.unit;
      for (let i = 0; i < width; i++) this.alphaUnits[i] = units[alpha.samples[alpha.at + x + i]];
      conversion.convertPremultiplied(this.words, at, x, width, imageWidth, samples, this.alphaUnits);
    } else {
      conversion.convert(this.words, at, x, width, imageWidth, samples);
    }
    if (alpha) {
      const bytes = this.alphaTable!.bytes;
      const { samples: a, at: from } = alpha;
      const out = this.band;
      for (let i = 0, o = at * 4 + 3; i < width; i++, o += 4) out[o] = bytes[a[from + x + i]];
    }
  }

  private setLuma(y: number): void {
    const luma = this.color.row(0, y);
    this.samples.y = luma.samples;
    this.samples.yAt = luma.at;
  }

  private chromaRow(row: number): [Samples, number, Samples, number] {
    const u = this.color.row(1, row);
    const v = this.color.row(2, row);
    return [u.samples, u.at, v.samples, v.at];
  }

  heldBytes(): number {
    if (this.closed) return 0;
    return this.band.byteLength + this.alphaUnits.byteLength + this.color.heldBytes() + (this.alphaRows?.heldBytes() ?? 0);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const codec of this.codecs) codec.close();
  }
}
