import kernelsModule from '../codecs/wasm/kernels.wasm';
import type { Contributions } from './lanczos';

/*
 * The Lanczos-3 passes over opaque rows in WebAssembly SIMD (codecs/kernels/resize.c): the same
 * arithmetic as lanczos.ts's hRowOpaque and vRowOpaque, byte for byte, about seven times as fast
 * (docs/performance.md). resize.ts keeps the window of rows and decides the order of the passes;
 * the rows, the window and the filters live in the kernels' memory, laid out here. Each resize
 * has its own memory of exactly this layout's size (WebAssembly memory never shrinks), dropped
 * with it.
 */

const PAGE_BYTES = 65_536;
/** The module keeps its stack in the first 4 KiB (codecs/kernels/build.sh); buffers start above its first page. */
const RESERVED_BYTES = PAGE_BYTES;
/**
 * Bytes readable and writable past every buffer: the vertical pass works in groups of four pixels
 * (up to 12 bytes past a row), the horizontal one reads one pixel past an output's last tap.
 */
const SLACK_BYTES = 16;

/** What the opaque passes of one resize need (resize.ts's layout). */
export interface KernelShape {
  /** Columns of a window row: the Lanczos input width (vertical first) or the output columns (horizontal first). */
  windowRowLength: number;
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

const align = (n: number) => Math.ceil(n / 16) * 16;
const groupsOf4 = (pixels: number) => Math.ceil(pixels / 4) * 4;
/** The longest filter of an axis, rounded up to an even number of taps (the kernels take weights in pairs). */
const pairStride = (c: Contributions, size: number) => {
  let longest = 1;
  for (let o = 0; o < size; o++) longest = Math.max(longest, c.count[o]);
  return longest + (longest & 1);
};

function offsets(shape: KernelShape): Offsets {
  const { ch, cv, hFirst, width, outWidth, outHeight } = shape;
  let at = RESERVED_BYTES;
  const take = (bytes: number) => {
    const start = at;
    at += align(bytes + SLACK_BYTES);
    return start;
  };
  const window = take(shape.windowRows * shape.windowRowLength * 4);
  // A row for the horizontal pass to read from when its result goes into the window.
  const input = hFirst ? take(width * 4) : 0;
  // Vertical then horizontal: the vertically filtered row in between.
  const tmp = !hFirst && ch && cv ? take(groupsOf4(width) * 4) : 0;
  const out = take(groupsOf4(outWidth) * 4);
  const hStride = ch ? pairStride(ch, outWidth) : 0;
  const hStart = ch ? take(outWidth * 4) : 0;
  const hCount = ch ? take(outWidth * 4) : 0;
  const hWeights = ch ? take(outWidth * hStride * 2) : 0;
  const vStride = cv ? pairStride(cv, outHeight) : 0;
  const vWeights = cv ? take(outHeight * vStride * 2) : 0;
  return { window, input, tmp, out, hStart, hCount, hWeights, hStride, vWeights, vStride, bytes: Math.ceil(at / PAGE_BYTES) * PAGE_BYTES };
}

/** The kernels' memory for a resize of this shape, in bytes. */
export function kernelMemoryBytes(shape: KernelShape): number {
  return offsets(shape).bytes;
}

interface Exports {
  h_row_opaque(src: number, dst: number, dstWidth: number, start: number, count: number, weights: number, stride: number): void;
  v_row_opaque(src: number, rowBytes: number, dst: number, width: number, weights: number, taps: number): void;
}

/** The opaque passes of one resize, on a memory of its own: rows go in as bytes and come out as bytes. */
export class OpaqueKernels {
  private readonly at: Offsets;
  private readonly heap: Uint8Array;
  private readonly exports: Exports;
  private readonly rowBytes: number;

  constructor(private readonly shape: KernelShape) {
    const at = offsets(shape);
    this.at = at;
    const memory = new WebAssembly.Memory({ initial: at.bytes / PAGE_BYTES, maximum: at.bytes / PAGE_BYTES });
    this.exports = new WebAssembly.Instance(kernelsModule, { env: { memory } }).exports as unknown as Exports;
    this.heap = new Uint8Array(memory.buffer);
    this.rowBytes = shape.windowRowLength * 4;
    const { ch, cv, outWidth, outHeight } = shape;
    if (ch) {
      new Int32Array(memory.buffer, at.hStart, outWidth).set(ch.start.subarray(0, outWidth));
      new Int32Array(memory.buffer, at.hCount, outWidth).set(ch.count.subarray(0, outWidth));
      pairWeights(ch, outWidth, new Int16Array(memory.buffer, at.hWeights, outWidth * at.hStride), at.hStride);
    }
    if (cv) pairWeights(cv, outHeight, new Int16Array(memory.buffer, at.vWeights, outHeight * at.vStride), at.vStride);
  }

  get bytes(): number {
    return this.at.bytes;
  }

  /** Puts a row (after the box step) into window row `slot`: as it is, or filtered horizontally first. */
  deliver(row: Uint8Array, slot: number): void {
    const { heap, at, shape } = this;
    const target = at.window + slot * this.rowBytes;
    if (!shape.hFirst) return heap.set(row, target);
    heap.set(row, at.input);
    this.exports.h_row_opaque(at.input, target, shape.outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
  }

  /** Output row y from the window rows starting at slot `first`, into out[byteOffset..]. */
  emit(y: number, first: number, out: Uint8Array, byteOffset: number): void {
    const { heap, at, shape, exports } = this;
    const { ch, cv, hFirst, outWidth, width } = shape;
    const source = at.window + first * this.rowBytes;
    const vertical = (dst: number, columns: number) => exports.v_row_opaque(source, this.rowBytes, dst, columns, at.vWeights + y * at.vStride * 2, cv!.count[y]);
    if (hFirst || !ch) vertical(at.out, outWidth);
    else if (cv) {
      vertical(at.tmp, width);
      exports.h_row_opaque(at.tmp, at.out, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    } else exports.h_row_opaque(source, at.out, outWidth, at.hStart, at.hCount, at.hWeights, at.hStride);
    out.set(heap.subarray(at.out, at.out + outWidth * 4), byteOffset);
  }

  /** Moves window rows [from, from + rows) to the window's start. */
  shiftWindow(from: number, rows: number): void {
    const start = this.at.window;
    this.heap.copyWithin(start, start + from * this.rowBytes, start + (from + rows) * this.rowBytes);
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
