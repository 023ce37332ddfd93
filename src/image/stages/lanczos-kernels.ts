import { KernelLayout, kernelInstance } from './kernel-memory';
import type { Contributions } from './lanczos';

/*
 * The Lanczos-3 passes in WebAssembly SIMD (codecs/kernels/resize.c), opaque or premultiplied, with
 * lanczos.ts's arithmetic (the TypeScript passes the pipeline ran before: the same bytes, four to
 * seven times as fast; docs/performance.md). resize.ts keeps the window of rows and decides the
 * order of the passes; the rows, the window and the filters live in the kernels' memory, laid out
 * here (kernel-memory.ts). Each resize has its own memory of exactly this layout's size, dropped
 * with it.
 */

/** What the passes of one resize need (resize.ts's layout). */
export interface KernelShape {
  opaque: boolean;
  /** Pixels of a window row: the Lanczos input width (vertical first) or the output columns (horizontal first). */
  windowRowPixels: number;
  windowRows: number;
  /** Width of the rows the passes read: after the box step. */
  width: number;
  outWidth: number;
  outHeight: number;
  ch: Contributions | null;
  cv: Contributions | null;
  hFirst: boolean;
}

interface Offsets {
  window: number;
  input: number;
  /** The input row premultiplied (rows with transparency, horizontal first). */
  inputValues: number;
  tmp: number;
  out: number;
  hStart: number;
  hCount: number;
  hWeights: number;
  hStride: number;
  vWeights: number;
  vStride: number;
  bytes: number;
}

const groupsOf4 = (pixels: number) => Math.ceil(pixels / 4) * 4;
/** The longest filter of an axis, rounded up to an even number of taps (the kernels take weights in pairs). */
const pairStride = (c: Contributions, size: number) => {
  let longest = 1;
  for (let o = 0; o < size; o++) longest = Math.max(longest, c.count[o]);
  return longest + (longest & 1);
};

/**
 * Bytes of a window row: RGBA pixels, or, filtered horizontally first with transparency, four
 * premultiplied uint16 values a pixel.
 */
const windowRowBytes = ({ opaque, hFirst, windowRowPixels }: KernelShape) => windowRowPixels * (hFirst && !opaque ? 8 : 4);

function offsets(shape: KernelShape): Offsets {
  const { ch, cv, hFirst, opaque, width, outWidth, outHeight } = shape;
  const layout = new KernelLayout();
  const take = (bytes: number) => layout.take(bytes);
  const window = take(shape.windowRows * windowRowBytes(shape));
  // A row for the horizontal pass to read from when its result goes into the window.
  const input = hFirst ? take(width * 4) : 0;
  const inputValues = hFirst && !opaque ? take(width * 8) : 0;
  // The row between the passes (vertical first): RGBA when opaque (both passes), premultiplied
  // values otherwise (also after a single pass, which unpremultiplies it into the output).
  const tmpPixels = cv ? width : outWidth;
  const tmp = hFirst ? 0 : opaque ? (ch && cv ? take(groupsOf4(width) * 4) : 0) : take(tmpPixels * 8);
  const out = take(groupsOf4(outWidth) * 4);
  const hStride = ch ? pairStride(ch, outWidth) : 0;
  const hStart = ch ? take(outWidth * 4) : 0;
  const hCount = ch ? take(outWidth * 4) : 0;
  const hWeights = ch ? take(outWidth * hStride * 2) : 0;
  const vStride = cv ? pairStride(cv, outHeight) : 0;
  const vWeights = cv ? take(outHeight * vStride * 2) : 0;
  return { window, input, inputValues, tmp, out, hStart, hCount, hWeights, hStride, vWeights, vStride, bytes: layout.bytes };
}

/** The kernels' memory for a resize of this shape, in bytes. */
export function kernelMemoryBytes(shape: KernelShape): number {
  return offsets(shape).bytes;
}

interface Exports {
  h_row_opaque(src: number, dst: number, dstWidth: number, start: number, count: number, weights: number, stride: number): void;
  v_row_opaque(src: number, rowBytes: number, dst: number, width: number, weights: number, taps: number): void;
  premultiply_row(src: number, dst: number, pixels: number): void;
  h_row_premultiplied(src: number, dst: number, dstWidth: number, start: number, count: number, weights: number, stride: number): void;
  h_row_premultiply(src: number, dst: number, dstWidth: number, start: number, count: number, weights: number, stride: number): void;
  v_row_premultiply(src: number, rowPixels: number, dst: number, width: number, weights: number, taps: number): void;
  h_row_unpremultiply(src: number, dst: number, dstWidth: number, start: number, count: number, weights: number, stride: number): void;
  v_row_unpremultiply(src: number, rowValues: number, dst: number, width: number, weights: number, taps: number): void;
  unpremultiply_row(src: number, dst: number, pixels: number): void;
}

/**
 * The passes of one resize, on a memory of their own: rows go in as RGBA bytes and come out as RGBA
 * bytes. The filters' weights are copied into the memory (as int16, half their size in lanczos.ts),
 * so the caller need not keep its own.
 */
export class LanczosKernels {
  private readonly at: Offsets;
  private readonly heap: Uint8Array;
  private readonly k: Exports;
  private readonly rowBytes: number;
  private readonly opaque: boolean;
  private readonly hFirst: boolean;
  private readonly horizontal: boolean;
  /** Taps of each output row's vertical filter. */
  private readonly vCount: Int32Array | null;
  private readonly width: number;
  private readonly outWidth: number;

  constructor(shape: KernelShape) {
    const at = offsets(shape);
    this.at = at;
    const { exports, memory } = kernelInstance<Exports>(at.bytes);
    this.k = exports;
    this.heap = new Uint8Array(memory.buffer);
    this.rowBytes = windowRowBytes(shape);
    const { ch, cv, outWidth, outHeight } = shape;
    this.opaque = shape.opaque;
    this.hFirst = shape.hFirst;
    this.horizontal = ch !== null;
    this.vCount = cv && cv.count.slice(0, outHeight);
    this.width = shape.width;
    this.outWidth = outWidth;
    if (ch) {
      new Int32Array(memory.buffer, at.hStart, outWidth).set(ch.start.subarray(0, outWidth));
      new Int32Array(memory.buffer, at.hCount, outWidth).set(ch.count.subarray(0, outWidth));
      pairWeights(ch, outWidth, new Int16Array(memory.buffer, at.hWeights, outWidth * at.hStride), at.hStride);
    }
    if (cv) pairWeights(cv, outHeight, new Int16Array(memory.buffer, at.vWeights, outHeight * at.vStride), at.vStride);
  }

  /** Puts a row (after the box step) into window row `slot`: as it is, or filtered horizontally first. */
  deliver(row: Uint8Array, slot: number): void {
    const { heap, at, k } = this;
    const target = at.window + slot * this.rowBytes;
    if (!this.hFirst) return heap.set(row, target);
    heap.set(row, at.input);
    if (this.opaque) return k.h_row_opaque(at.input, target, this.outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    k.premultiply_row(at.input, at.inputValues, this.width);
    k.h_row_premultiplied(at.inputValues, target, this.outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
  }

  /** Output row y from the window rows starting at slot `first`, into out[byteOffset..]. */
  emit(y: number, first: number, out: Uint8Array, byteOffset: number): void {
    const { heap, at } = this;
    if (this.opaque) this.emitOpaque(y, at.window + first * this.rowBytes);
    else this.emitPremultiplied(y, at.window + first * this.rowBytes);
    out.set(heap.subarray(at.out, at.out + this.outWidth * 4), byteOffset);
  }

  /** Moves window rows [from, from + rows) to the window's start. */
  shiftWindow(from: number, rows: number): void {
    const start = this.at.window;
    this.heap.copyWithin(start, start + from * this.rowBytes, start + (from + rows) * this.rowBytes);
  }

  private emitOpaque(y: number, source: number): void {
    const { at, k, vCount, hFirst, outWidth, width } = this;
    const vertical = (dst: number, columns: number) => k.v_row_opaque(source, this.rowBytes, dst, columns, this.vWeights(y), vCount![y]);
    if (hFirst || !this.horizontal) vertical(at.out, outWidth);
    else if (vCount) {
      vertical(at.tmp, width);
      k.h_row_opaque(at.tmp, at.out, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    } else k.h_row_opaque(source, at.out, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
  }

  private emitPremultiplied(y: number, source: number): void {
    const { at, k, vCount, hFirst, outWidth, width } = this;
    if (hFirst) return k.v_row_unpremultiply(source, this.rowBytes / 2, at.out, outWidth, this.vWeights(y), vCount![y]);
    if (vCount) k.v_row_premultiply(source, width, at.tmp, width, this.vWeights(y), vCount[y]);
    else k.h_row_premultiply(source, at.tmp, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    if (this.horizontal && vCount) k.h_row_unpremultiply(at.tmp, at.out, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    else k.unpremultiply_row(at.tmp, at.out, outWidth);
  }

  private vWeights(y: number): number {
    return this.at.vWeights + y * this.at.vStride * 2;
  }
}

/** Each output's weights as int16, padded with zeros to `stride` (lanczos.ts's are 14-bit, so they fit). */
function pairWeights(c: Contributions, size: number, into: Int16Array, stride: number): void {
  for (let o = 0; o < size; o++) {
    const weights = c.weights.subarray(o * c.stride, o * c.stride + c.count[o]);
    for (const weight of weights) if (weight !== (weight << 16) >> 16) throw new Error(`resize: weight ${weight} does not fit 16 bits`);
    into.set(weights, o * stride);
  }
}
