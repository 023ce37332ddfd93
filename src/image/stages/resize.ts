import { BoxRowShrinker, boxShrinkFactor } from './box-shrink';
import { contributions, type Contributions } from './lanczos';
import { kernelMemoryBytes, LanczosKernels, type KernelShape } from './lanczos-kernels';
import { pixelWords } from './pixels';
import type { RowSource } from './rows';
import type { Dimensions, RgbaImage } from '../types';

/*
 * Resizing as a stage of the band pipeline: rows stream in, a window of as many rows as the
 * vertical kernel spans is kept, and output rows stream out (lanczos.ts has the arithmetic).
 * - Large reductions of opaque images start with a box filter down to at least twice the target
 *   size (box-shrink.ts), as vips_resize does with its default gap. Images with transparency
 *   skip it: averaging colour without alpha weighting would make fringes.
 * - The passes are our WebAssembly SIMD kernels (lanczos-kernels.ts), in a memory of their own that
 *   holds the window.
 * - Of the two pass orders the one doing fewer multiply-adds is used: horizontal first keeps a
 *   window of filtered (narrow) rows, vertical first a window of input rows. An axis whose size
 *   does not change is not filtered. Either way the result is the same as filtering the whole
 *   image axis by axis.
 * - Enlarging is Lanczos-3 too, centre-aligned. libvips (sharp) enlarges differently: bicubic
 *   via vips_affine, half an output pixel off centre (libvips issues #517, #4841), so for
 *   upscales our output is close to, but deliberately not the same as, sharp's.
 */

/** Rows of filtered slack in a window, so rows are shifted down once every this many rows, not every row. */
const WINDOW_SLACK = 32;

interface Layout {
  box: { fx: number; fy: number; width: number; height: number } | null;
  /** Size after the box step: what the Lanczos passes read. */
  width: number;
  height: number;
  /** Output columns made: the target width, or only the columns a cut keeps. */
  outWidth: number;
  ch: Contributions | null;
  cv: Contributions | null;
  /** The window holds horizontally filtered rows (true) or rows before any Lanczos pass (false). */
  hFirst: boolean;
  windowRows: number;
  /** Pixels of a window row. */
  windowRowPixels: number;
}

/**
 * The part of the source a resize shows, in source pixels and fractions of them: a crop that lies
 * between the pixels of a scaled decode (plan.ts shrinkCropOnLoad). Null: the whole source.
 */
export interface SourceWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Output columns x..x+width-1 of a resize: what a following cut keeps (cover), so no other column is made. */
export interface Columns {
  x: number;
  width: number;
}

function layout(from: Dimensions, to: Dimensions, opaque: boolean, columns: Columns | null = null, window: SourceWindow | null = null): Layout {
  const shown = window ?? { x: 0, y: 0, ...from };
  const fx = opaque ? boxShrinkFactor(shown.width, to.width) : 1;
  const fy = opaque ? boxShrinkFactor(shown.height, to.height) : 1;
  const box = fx > 1 || fy > 1 ? { fx, fy, width: Math.ceil(from.width / fx), height: Math.ceil(from.height / fy) } : null;
  const width = box ? box.width : from.width;
  const height = box ? box.height : from.height;
  // After the box step the input-per-output ratio stays the original one divided by the box
  // (libvips' residual shrink): a last, partial box does not stretch the grid. A window is that
  // part of the source, wherever its edges fall.
  const filtersColumns = width !== to.width || shown.x !== 0 || shown.width !== from.width;
  const filtersRows = height !== to.height || shown.y !== 0 || shown.height !== from.height;
  const allColumns = filtersColumns ? contributions(width, to.width, shown.width / fx / to.width, shown.x / fx) : null;
  const ch = allColumns && columns ? sliceContributions(allColumns, columns) : allColumns;
  const outWidth = ch && columns ? columns.width : to.width;
  const cv = filtersRows ? contributions(height, to.height, shown.height / fy / to.height, shown.y / fy) : null;
  const hFirst = ch !== null && cv !== null && horizontalFirst({ width, height }, { width: outWidth, height: to.height }, ch.taps, cv.taps, opaque);
  let maxTaps = 1;
  if (cv) for (let o = 0; o < to.height; o++) maxTaps = Math.max(maxTaps, cv.count[o]);
  return { box, width, height, outWidth, ch, cv, hFirst, windowRows: maxTaps + WINDOW_SLACK, windowRowPixels: hFirst ? outWidth : width };
}

/**
 * Which order of the two passes does less work, from the rows each pass runs over times its taps a
 * row (`hTaps`, `vTaps`: the filters' taps summed over their outputs). With transparency a vertical
 * pass premultiplies at every tap, about twice the work of a tap over rows premultiplied once (half
 * a tap's work a pixel), as the horizontal-first order has them; that order's window holds 8 bytes
 * a pixel instead of 4, so it is taken only where it is no wider in bytes.
 */
export function horizontalFirst(from: Dimensions, to: Dimensions, hTaps: number, vTaps: number, opaque: boolean): boolean {
  if (opaque) return from.height * hTaps + to.width * vTaps <= from.width * vTaps + to.height * hTaps;
  const horizontal = from.height * hTaps + (from.height * from.width) / 2 + to.width * vTaps;
  const vertical = 2 * from.width * vTaps + to.height * hTaps;
  return 2 * to.width <= from.width && horizontal <= vertical;
}

function sliceContributions(c: Contributions, { x, width }: Columns): Contributions {
  const count = c.count.subarray(x, x + width);
  return {
    start: c.start.subarray(x, x + width),
    count,
    weights: c.weights.subarray(x * c.stride, (x + width) * c.stride),
    stride: c.stride,
    taps: count.reduce((sum, n) => sum + n, 0),
  };
}

/**
 * Recent answers of resizeScratchBytes. A plan's searches ask about the same resize many times
 * (fitToBudget's caps, and each size a refusal tries), and a large filter, which lanczos.ts does
 * not keep, takes milliseconds to make: a 48 MP refusal spent 1.6-3 s making them.
 */
const scratchBytesCache = new Map<string, number>();
const SCRATCH_BYTES_CACHED = 64;

/** Bytes a resize holds besides its input and output bands: window, box sums and row buffers (memory-plan.ts). */
export function resizeScratchBytes(from: Dimensions, to: Dimensions, opaque = true, columns: Columns | null = null): number {
  const key = `${from.width}x${from.height} ${to.width}x${to.height} ${opaque} ${columns ? `${columns.x}+${columns.width}` : ''}`;
  const cached = scratchBytesCache.get(key);
  if (cached !== undefined) return cached;
  const l = layout(from, to, opaque, columns);
  const boxBytes = l.box ? l.box.width * (3 * 8 + 4) : 0;
  const bytes = kernelMemoryBytes(kernelShape(l, to, opaque)) + boxBytes + contributionBytes(l, to);
  scratchBytesCache.set(key, bytes);
  if (scratchBytesCache.size > SCRATCH_BYTES_CACHED) scratchBytesCache.delete(scratchBytesCache.keys().next().value!);
  return bytes;
}

/** resizeScratchBytes for a picture that may or may not be opaque (the two paths hold different buffers). */
export function resizeScratchBytesEither(from: Dimensions, to: Dimensions): number {
  return Math.max(resizeScratchBytes(from, to, true), resizeScratchBytes(from, to, false));
}

function kernelShape(l: Layout, to: Dimensions, opaque: boolean): KernelShape {
  const { windowRowPixels, windowRows, width, outWidth, ch, cv, hFirst } = l;
  return { opaque, windowRowPixels, windowRows, width, outWidth, outHeight: to.height, ch, cv, hFirst };
}

/** The filters' positions, which the resize keeps (their weights go into the kernels' memory). */
function contributionBytes(l: Layout, to: Dimensions): number {
  return (l.ch ? 8 * l.outWidth : 0) + (l.cv ? 8 * to.height : 0);
}

/** A filter without its weights: where each output reads, for the window's bookkeeping. */
function positionsOf(c: Contributions): Contributions {
  return { ...c, weights: new Int32Array(0) };
}

/**
 * Resizes a stream of rows: `push` input rows (opaque or not as declared) while `wantsInput()`,
 * then `emit` the next output row; repeat. Holds one window of rows, never a frame.
 */
export class RowResizer {
  /** The layout, its filters without their weights (the kernels have those). */
  private readonly l: Layout;
  private readonly shrinker: BoxRowShrinker | null;
  private readonly boxRow: Int32Array | null;
  /** The passes and their window of rows. */
  private readonly kernels: LanczosKernels;
  private windowFirst = 0;
  private windowCount = 0;
  private inputRows = 0;
  /** Rows delivered to the Lanczos passes (after the box step). */
  private delivered = 0;
  private outputRow = 0;

  constructor(
    private readonly from: Dimensions,
    private readonly to: Dimensions,
    opaque: boolean,
    columns: Columns | null = null,
    window: SourceWindow | null = null,
  ) {
    const l = layout(from, to, opaque, columns, window);
    this.shrinker = l.box ? new BoxRowShrinker(from.width, l.box.fx, l.box.fy) : null;
    this.boxRow = l.box ? new Int32Array(l.box.width) : null;
    this.kernels = new LanczosKernels(kernelShape(l, to, opaque));
    this.l = { ...l, ch: l.ch && positionsOf(l.ch), cv: l.cv && positionsOf(l.cv) };
  }

  /** Whether the next output row still needs another input row. */
  wantsInput(): boolean {
    const { cv } = this.l;
    const last = cv ? cv.start[this.outputRow] + cv.count[this.outputRow] - 1 : this.outputRow;
    return this.delivered <= last;
  }

  /** One input row of `from.width` RGBA words starting at src[offset]. */
  push(src: Int32Array, offset: number): void {
    this.inputRows++;
    const { shrinker, boxRow } = this;
    if (!shrinker || !boxRow) return this.deliver(src, offset);
    shrinker.add(src, offset);
    if (shrinker.full || this.inputRows === this.from.height) {
      shrinker.take(boxRow, 0);
      this.deliver(boxRow, 0);
    }
  }

  /** Columns of each output row: to.width, or the columns asked for. */
  get outWidth(): number {
    return this.l.outWidth;
  }

  /** Writes the next output row (outWidth RGBA pixels) at out[byteOffset]; only when !wantsInput(). */
  emit(out: Uint8Array, byteOffset: number): void {
    const { cv } = this.l;
    const y = this.outputRow++;
    this.kernels.emit(y, (cv ? cv.start[y] : y) - this.windowFirst, out, byteOffset);
  }

  /** A row after the box step: into the window, horizontally filtered first if that order was chosen. */
  private deliver(src: Int32Array, offset: number): void {
    this.kernels.deliver(new Uint8Array(src.buffer, src.byteOffset + offset * 4, this.l.width * 4), this.windowSlot());
    this.windowCount++;
    this.delivered++;
  }

  /** The window row the next delivered row goes to; drops rows no later output row needs when the window is full. */
  private windowSlot(): number {
    const { cv, windowRows } = this.l;
    if (this.windowCount === windowRows) {
      const keepFrom = cv ? cv.start[Math.min(this.outputRow, this.to.height - 1)] : this.outputRow;
      const drop = Math.min(this.windowCount, keepFrom - this.windowFirst);
      if (drop <= 0) throw new Error('resize: window overflow');
      this.kernels.shiftWindow(drop, this.windowCount - drop);
      this.windowFirst += drop;
      this.windowCount -= drop;
    }
    return this.windowCount;
  }
}

const BAND_ROWS = 16;

/**
 * The resize stage: `source` resized to exactly width x height with Lanczos-3 (box step first for
 * large reductions of opaque sources). Bands of BAND_ROWS output rows. With `columns`, only those
 * columns of the result are made where the width changes (the source's width is then
 * columns.width; otherwise all are, and the caller cuts); with `window`, the result shows that
 * part of the source.
 */
export function resizeRows(source: RowSource, targetWidth: number, height: number, columns: Columns | null = null, window: SourceWindow | null = null): RowSource {
  checkSize(targetWidth, height, source.width, source.height);
  const resizer = new RowResizer(source, { width: targetWidth, height }, !source.alpha, columns, window);
  const width = resizer.outWidth;
  const out = new Uint8Array(BAND_ROWS * width * 4);
  const scratch = resizeScratchBytes(source, { width: targetWidth, height }, !source.alpha, columns);
  let input: { words: Int32Array; row: number; rows: number } | null = null;
  let y = 0;
  const nextInput = async () => {
    const band = await source.read();
    if (!band) throw new Error(`resize: the source ended before its ${source.height} rows`);
    input = { words: pixelWords(band.data), row: 0, rows: band.rows };
    return input;
  };
  return {
    width,
    height,
    model: source.model,
    alpha: source.alpha,
    grey: source.grey,
    async read() {
      if (y >= height) {
        source.close();
        return null;
      }
      const rows = Math.min(BAND_ROWS, height - y);
      for (let i = 0; i < rows; i++) {
        while (resizer.wantsInput()) {
          const band = input && input.row < input.rows ? input : await nextInput();
          resizer.push(band.words, band.row++ * source.width);
        }
        resizer.emit(out, i * width * 4);
      }
      const band = { y, rows, data: out.subarray(0, rows * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => source.heldBytes() + out.byteLength + scratch,
    close: () => source.close(),
  };
}

/** Resizes a whole image to exactly width x height (the same arithmetic as resizeRows). */
export function resize(image: RgbaImage, width: number, height: number): RgbaImage {
  const { width: srcW, height: srcH } = image;
  checkSize(width, height, srcW, srcH);
  if (image.data.length !== srcW * srcH * 4) {
    throw new Error(`resize: data length ${image.data.length} does not match ${srcW}x${srcH} RGBA`);
  }
  if (width === srcW && height === srcH) return { data: new Uint8Array(image.data), width, height };
  const src = pixelWords(image.data);
  const resizer = new RowResizer(image, { width, height }, isOpaque(src));
  const out = new Uint8Array(width * height * 4);
  let row = 0;
  for (let y = 0; y < height; y++) {
    while (resizer.wantsInput()) resizer.push(src, row++ * srcW);
    resizer.emit(out, y * width * 4);
  }
  return { data: out, width, height };
}

function checkSize(width: number, height: number, srcW: number, srcH: number): void {
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width < 1 || height < 1) {
    throw new Error(`resize: invalid target size ${width}x${height}`);
  }
  if (!Number.isSafeInteger(srcW) || !Number.isSafeInteger(srcH) || srcW < 1 || srcH < 1) {
    throw new Error(`resize: invalid source size ${srcW}x${srcH}`);
  }
}

function isOpaque(px: Int32Array): boolean {
  for (let i = 0; i < px.length; i++) if (px[i] >>> 24 !== 255) return false;
  return true;
}
