import { gaussianMask, gridStep, type GaussianMask } from './gaussian';
import { KernelLayout, kernelInstance } from './kernel-memory';

/*
 * The blur, sharpen and grayscale steps in WebAssembly SIMD (codecs/kernels/filters.c), computing
 * what their TypeScript computed before (test/support/filters-reference.ts), byte for byte. The
 * stages (blur.ts, sharpen.ts, grayscale.ts) hand rows in and take bands out; the window of rows,
 * the Gaussian's grid and the output band live in the kernels' memory, laid out here, one memory
 * per stage of exactly this layout's size (the memory plan counts it: blurBytes, sharpenBytes).
 */

/** Bytes of the C structs Gauss and Sharpen (filters.c), with room to spare. */
const STATE_BYTES = 128;

interface GaussianShape {
  width: number;
  height: number;
  channels: number;
  mask: GaussianMask;
  step: number;
  /** Planes of integers no larger than maxValue (opaque colour, L*), or else floats (premultiplied colour). */
  integers: boolean;
  maxValue: number;
}

interface GaussianOffsets {
  state: number;
  weights: number;
  mask: number;
  mask16: number;
  window: number;
  padded: number;
  grid: number;
  across: number;
  phases: number;
  phases32: number;
  rows: number;
  /** One output row as float planes, then as byte planes. */
  out: number;
  /** Integer planes (their horizontal sums below 2^24, where a float is exact). */
  integer: boolean;
  /** Float planes whose grid sums stay below 2^22 (filters.c h_grid_float). */
  exactSums: boolean;
  windowRows: number;
}

const groupsOf4 = (n: number) => Math.ceil(n / 4) * 4;

function gaussianLayout(layout: KernelLayout, shape: GaussianShape): GaussianOffsets {
  const { width, channels, mask, step } = shape;
  const { radius, scale } = mask;
  const columns = step > 1 ? Math.floor((width - 1) / step) + 4 : width;
  const stride = groupsOf4(columns * channels);
  const windowRows = 2 * radius + 1 + (step > 1 ? 3 * step : 0);
  // Sums of integer planes must stay below 2^24, where the TypeScript's floats were exact and the
  // kernels' int32 sums are the same (blur sigma 1000: 11.9 M; sharpen sigma 10: 16.1 M).
  const integer = shape.integers;
  if (integer && scale * shape.maxValue >= 2 ** 24) throw new Error(`gaussian: sums of up to ${scale * shape.maxValue} are not exact in floats`);
  const taps = Math.ceil((2 * radius + 1) / 8) * 8;
  const take = (bytes: number) => layout.take(bytes);
  return {
    state: take(STATE_BYTES),
    weights: take((radius + 1) * 8),
    mask: step > 1 && !integer ? take(taps * 8) : 0,
    mask16: step > 1 && integer ? take(taps * 2) : 0,
    window: take(windowRows * stride * 4),
    padded: take((width + 2 * (radius + 2 * step) + 8) * (integer ? 2 : 4)),
    grid: step > 1 ? take(4 * stride * 4) : 0,
    across: step > 1 ? take((columns + 4) * 4) : 0,
    phases: take(4 * step * 8),
    phases32: take(4 * step * 4),
    rows: take((2 * radius + 1) * 4),
    out: take(groupsOf4(width * channels) * 5),
    integer,
    exactSums: scale * shape.maxValue < 2 ** 22,
    windowRows,
  };
}

interface Exports {
  gauss_init(...args: number[]): void;
  gauss_wants_input(state: number): number;
  gauss_push(state: number, planes: number): void;
  blur_push(state: number, rgba: number): void;
  blur_emit(state: number, planes: number, rgba: number): void;
  grayscale_tables(tables: number, linear: number, encoded: number): void;
  grayscale_row(pixels: number, count: number, tables: number): void;
  sharpen_init(...args: number[]): void;
  sharpen_lightness(state: number, slot: number): number;
  sharpen_emit(state: number, gauss: number, y: number, out: number): number;
}

/** Writes the mask where the layout put it and initialises the Gaussian's state. */
function initGaussian(k: Exports, buffer: ArrayBuffer, at: GaussianOffsets, shape: GaussianShape): void {
  const { weights, radius, scale } = shape.mask;
  new Float64Array(buffer, at.weights, radius + 1).set(weights.subarray(radius));
  if (at.mask) new Float64Array(buffer, at.mask, weights.length).set(weights);
  if (at.mask16) new Int16Array(buffer, at.mask16, weights.length).set(weights);
  k.gauss_init(
    at.state, shape.width, shape.height, shape.channels, shape.step, radius, scale, shape.maxValue, at.windowRows, Number(at.integer), Number(at.exactSums),
    at.weights, at.mask, at.mask16, at.window, at.padded, at.grid, at.across, at.phases, at.phases32, at.rows,
  );
}

/* ---- blur ---- */

/** libvips' minimum amplitude for sharp's blur(sigma). */
const BLUR_MIN_AMPLITUDE = 0.2;

interface BlurOffsets {
  gauss: GaussianOffsets;
  input: number;
  band: number;
  bytes: number;
}

function blurLayout(width: number, height: number, channels: number, sigma: number, bandRows: number): BlurOffsets {
  const layout = new KernelLayout();
  const shape = blurShape(width, height, channels, sigma);
  const gauss = gaussianLayout(layout, shape);
  const input = layout.take(width * 4);
  const band = layout.take(bandRows * width * 4);
  return { gauss, input, band, bytes: layout.bytes };
}

function blurShape(width: number, height: number, channels: number, sigma: number): GaussianShape {
  return { width, height, channels, mask: gaussianMask(sigma, BLUR_MIN_AMPLITUDE), step: gridStep(sigma), integers: channels !== 4, maxValue: 255 };
}

/** The memory of a blur of a picture `width` wide over `channels` planes, in bands of `bandRows`. */
export function blurKernelBytes(width: number, height: number, channels: number, sigma: number, bandRows: number): number {
  return blurLayout(width, height, channels, sigma, bandRows).bytes;
}

/**
 * The passes of one blur over `channels` planes: R (grey), R G B (opaque colour), or R G B
 * premultiplied and A. Rows go in as RGBA bytes (`push` while `wantsInput()`), output rows are
 * made into a band in the kernels' memory (`emit`), handed on as a view (`band`).
 */
export class BlurKernels {
  private readonly at: BlurOffsets;
  private readonly k: Exports;
  private readonly heap: Uint8Array;

  constructor(
    private readonly width: number,
    height: number,
    private readonly channels: number,
    sigma: number,
    bandRows: number,
  ) {
    this.at = blurLayout(width, height, channels, sigma, bandRows);
    const { exports, memory } = kernelInstance<Exports>(this.at.bytes);
    this.k = exports;
    this.heap = new Uint8Array(memory.buffer);
    initGaussian(exports, memory.buffer, this.at.gauss, blurShape(width, height, channels, sigma));
  }

  wantsInput(): boolean {
    return this.k.gauss_wants_input(this.at.gauss.state) !== 0;
  }

  /** The next input row: `width` RGBA pixels. */
  push(row: Uint8Array): void {
    const { at, k } = this;
    this.heap.set(row, at.input);
    k.blur_push(at.gauss.state, at.input);
  }

  /** The next output row, as row `bandRow` of the band (rows come out in order: RowWindow's `_y` is not needed). */
  emit(_y: number, bandRow: number): void {
    const { at, k } = this;
    k.blur_emit(at.gauss.state, at.gauss.out, at.band + bandRow * this.width * 4);
  }

  /** The band's first `rows` rows (valid until the next emit). */
  band(rows: number): Uint8Array {
    return this.heap.subarray(this.at.band, this.at.band + rows * this.width * 4);
  }
}

/* ---- sharpen ---- */

/** libvips' minimum amplitude for the blur inside vips_sharpen. */
export const SHARPEN_MIN_AMPLITUDE = 0.1;
/** Largest L* in LabS units (L * 327.67). */
const LABS_MAX = 32767;

/** What sharpen.ts gives the kernels: its tables, and its own arithmetic for pixels with partial transparency. */
export interface SharpenTables {
  /** Linear light of each 8-bit value (256). */
  linear: Float64Array;
  /** 8-bit sRGB of linear / (length - 1), rounded. */
  encode: Uint8Array;
  /** libvips' change of L for indexes changeFrom .. changeFrom + change.length - 1 (constant beyond). */
  change: Int32Array;
  changeFrom: number;
}

interface SharpenOffsets {
  gauss: GaussianOffsets;
  state: number;
  originals: number;
  lightnesses: number;
  blurred: number;
  linear: number;
  encode: number;
  change: number;
  fixups: number;
  band: number;
  ring: number;
  bytes: number;
}

function sharpenShape(width: number, height: number, sigma: number): GaussianShape {
  return { width, height, channels: 1, mask: gaussianMask(sigma, SHARPEN_MIN_AMPLITUDE), step: gridStep(sigma), integers: true, maxValue: LABS_MAX };
}

function sharpenLayout(width: number, height: number, sigma: number, bandRows: number, encodeBytes: number, changeLength: number): SharpenOffsets {
  const layout = new KernelLayout();
  const shape = sharpenShape(width, height, sigma);
  const gauss = gaussianLayout(layout, shape);
  // The rows the Gaussian has read ahead of the output.
  const ring = shape.mask.radius + 1 + (shape.step > 1 ? 3 * shape.step : 0) + 1;
  const take = (bytes: number) => layout.take(bytes);
  return {
    gauss,
    state: take(STATE_BYTES),
    originals: take(ring * width * 4),
    lightnesses: take(ring * width * 4),
    blurred: take(groupsOf4(width) * 4),
    linear: take(256 * 8),
    encode: take(encodeBytes),
    change: take(changeLength * 4),
    fixups: take(2 * width * 4),
    band: take(bandRows * width * 4),
    ring,
    bytes: layout.bytes,
  };
}

/** The memory of a sharpen of a picture `width` wide, in bands of `bandRows`. */
export function sharpenKernelBytes(width: number, height: number, sigma: number, bandRows: number, tables: SharpenTables): number {
  return sharpenLayout(width, height, sigma, bandRows, tables.encode.length, tables.change.length).bytes;
}

/**
 * The passes of one sharpen: rows go in as RGBA bytes (`push` while `wantsInput()`), output rows
 * are made into a band in the kernels' memory (`emit`). Pixels with alpha strictly between 0 and
 * 255 are the caller's to work out (`lightnessOf`, `moved`): their premultiplied colour takes
 * Math.pow, whose last bit the kernels cannot promise.
 */
export class SharpenKernels {
  private readonly at: SharpenOffsets;
  private readonly k: Exports;
  private readonly heap: Uint8Array;
  private readonly words: Uint32Array;
  private readonly lightnesses: Int32Array;
  private readonly fixups: Int32Array;
  private pushed = 0;

  constructor(
    private readonly width: number,
    height: number,
    sigma: number,
    bandRows: number,
    tables: SharpenTables,
    private readonly lightnessOf: (pixel: number) => number,
    private readonly moved: (pixel: number, change: number) => number,
  ) {
    const at = sharpenLayout(width, height, sigma, bandRows, tables.encode.length, tables.change.length);
    this.at = at;
    const { exports, memory } = kernelInstance<Exports>(at.bytes);
    const { buffer } = memory;
    this.k = exports;
    this.heap = new Uint8Array(buffer);
    this.words = new Uint32Array(buffer);
    this.lightnesses = new Int32Array(buffer, at.lightnesses, at.ring * width);
    this.fixups = new Int32Array(buffer, at.fixups, 2 * width);
    initGaussian(exports, buffer, at.gauss, sharpenShape(width, height, sigma));
    new Float64Array(buffer, at.linear, 256).set(tables.linear);
    this.heap.set(tables.encode, at.encode);
    new Int32Array(buffer, at.change, tables.change.length).set(tables.change);
    exports.sharpen_init(
      at.state, width, at.ring, at.originals, at.lightnesses, at.blurred, at.linear, at.encode, at.change, tables.changeFrom, tables.change.length, at.fixups,
    );
  }

  wantsInput(): boolean {
    return this.k.gauss_wants_input(this.at.gauss.state) !== 0;
  }

  /** The next input row: `width` RGBA pixels. */
  push(row: Uint8Array): void {
    const { at, k, width } = this;
    const slot = this.pushed++ % at.ring;
    const original = at.originals + slot * width * 4;
    this.heap.set(row, original);
    const left = k.sharpen_lightness(at.state, slot);
    for (let i = 0; i < left; i++) {
      const x = this.fixups[i];
      this.lightnesses[slot * width + x] = this.lightnessOf(this.words[(original >> 2) + x]);
    }
    k.gauss_push(at.gauss.state, at.lightnesses + slot * width * 4);
  }

  /** Output row y, as row `bandRow` of the band. */
  emit(y: number, bandRow: number): void {
    const { at, k, width, words, fixups } = this;
    const out = at.band + bandRow * width * 4;
    const left = k.sharpen_emit(at.state, at.gauss.state, y, out);
    const original = (at.originals + (y % at.ring) * width * 4) >> 2;
    for (let i = 0; i < left; i++) {
      const x = fixups[2 * i];
      words[(out >> 2) + x] = this.moved(words[original + x], fixups[2 * i + 1]);
    }
  }

  band(rows: number): Uint8Array {
    return this.heap.subarray(this.at.band, this.at.band + rows * this.width * 4);
  }
}

/* ---- grayscale ---- */

/** Pixels made grey at a time: bands are copied through the kernels' memory in pieces of this. */
const GREY_PIECE = 16_384;

function grayscaleLayout() {
  const layout = new KernelLayout();
  const linear = layout.take(256 * 8);
  const encoded = layout.take(257 * 4);
  const tables = layout.take(1280 * 8);
  const pixels = layout.take(GREY_PIECE * 4);
  return { linear, encoded, tables, pixels, bytes: layout.bytes };
}

/** The memory of a grayscale stage: the same for every size. */
export const GRAYSCALE_KERNEL_BYTES = grayscaleLayout().bytes;

/** libvips' sRGB -> B_W over pixels in place, with its tables (256 linear values, 257 encoded). */
export class GrayscaleKernels {
  private readonly at = grayscaleLayout();
  private readonly k: Exports;
  private readonly heap: Uint8Array;

  constructor(linear: Float64Array, encoded: Int32Array) {
    const { exports, memory } = kernelInstance<Exports>(this.at.bytes);
    this.k = exports;
    this.heap = new Uint8Array(memory.buffer);
    new Float64Array(memory.buffer, this.at.linear, 256).set(linear);
    new Int32Array(memory.buffer, this.at.encoded, 257).set(encoded);
    exports.grayscale_tables(this.at.tables, this.at.linear, this.at.encoded);
  }

  /** Every pixel of `data` (RGBA) made grey, alpha kept. */
  apply(data: Uint8Array): void {
    const { at, heap, k } = this;
    for (let from = 0; from < data.length; from += GREY_PIECE * 4) {
      const piece = data.subarray(from, Math.min(data.length, from + GREY_PIECE * 4));
      heap.set(piece, at.pixels);
      k.grayscale_row(at.pixels, piece.length >> 2, at.tables);
      piece.set(heap.subarray(at.pixels, at.pixels + piece.length));
    }
  }
}
