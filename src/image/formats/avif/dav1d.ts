import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import { openEmscripten, type WasmInstance } from '../../codecs/codec';
import dav1dFactory from '../../codecs/wasm/dav1d.js';
import dav1dWasm from '../../codecs/wasm/dav1d.wasm';
import type { ByteRange } from './container';
import { unsupportedAvif } from './limits';

/** The entry points of codecs/dav1d/avif_dav1d.c. Pointers are byte offsets in the wasm memory. */
interface Dav1dModule {
  _avif_dav1d_open(maxPixels: number): number;
  _avif_dav1d_input(decoder: number, size: number): number;
  _avif_dav1d_decode(decoder: number, picture: number): number;
  _avif_dav1d_decode_entry(): number;
  _avif_dav1d_decode_windowed_entry(): number;
  _avif_dav1d_window(decoder: number): number;
  _avif_dav1d_close(decoder: number): void;
  _avif_dav1d_picture_create(): number;
  _avif_dav1d_picture_release(picture: number): void;
  _avif_dav1d_picture_destroy(picture: number): void;
}

/** dav1d reports the pixels of each row of superblocks it has decoded: a 12 MP frame takes about 1 s. */
const NS_PER_DECODED_PIXEL = 80;

/** Return codes of avif_dav1d_decode. */
const DAMAGED = 1;
const UNSUPPORTED = 2;
const NO_MEMORY = 3;
const WHOLE_FRAME = 5;

/** Chroma layouts as dav1d numbers them (Dav1dPixelLayout). */
export const LAYOUT_I400 = 0;
export const LAYOUT_I420 = 1;
export const LAYOUT_I422 = 2;
export const LAYOUT_I444 = 3;

/** Fields of the Picture struct (avif_dav1d.c: INFO_*), read as Int32. */
const FIELDS = 14;
/** A Window's fields: a Picture's (its planes' rows at the window's top), then WINDOW_TOP and WINDOW_READY. */
const WINDOW_FIELDS = FIELDS + 2;

/** A decoded frame's format and its AV1 sequence header's colour description. */
export interface PictureFormat {
  width: number;
  height: number;
  bitDepth: 8 | 10 | 12;
  layout: number;
  matrix: number;
  fullRange: boolean;
}

export type Samples = Uint8Array | Uint16Array;

/** A decoded frame in wasm memory; its planes stay valid until `release()`. */
export class DecodedPicture {
  private fields = new Int32Array(FIELDS);
  private live = false;

  constructor(
    private readonly codec: Dav1dCodec,
    /** Address of the C Picture struct. */
    readonly handle: number,
  ) {}

  /** Called by Dav1dCodec.decode. */
  refresh(memory: ArrayBuffer): void {
    this.fields.set(new Int32Array(memory, this.handle, FIELDS));
    this.live = true;
  }

  get format(): PictureFormat {
    const f = this.fields;
    return { width: f[0], height: f[1], bitDepth: f[2] as 8 | 10 | 12, layout: f[3], matrix: f[9], fullRange: f[10] !== 0 };
  }

  /**
   * A plane (0 = Y, 1 = U, 2 = V) as samples with its row stride in samples. A view of the wasm
   * memory as it is now: take it again after anything that may grow the memory (a decode).
   */
  plane(index: 0 | 1 | 2): { samples: Samples; stride: number } {
    if (!this.live) throw new Error('dav1d: plane of a released picture');
    const f = this.fields;
    const address = f[4 + index];
    const strideBytes = index === 0 ? f[7] : f[8];
    const rows = index === 0 || (f[3] !== LAYOUT_I420) ? f[1] : (f[1] + 1) >> 1;
    const buffer = this.codec.memoryBuffer();
    if (f[2] === 8) return { samples: new Uint8Array(buffer, address, strideBytes * rows), stride: strideBytes };
    return { samples: new Uint16Array(buffer, address, (strideBytes >> 1) * rows), stride: strideBytes >> 1 };
  }

  /** Gives the frame's buffer back to dav1d (the handle can be decoded into again). */
  release(): void {
    if (!this.live) return;
    this.live = false;
    this.codec.releasePicture(this);
  }
}

/** Where a windowed decode stands: the planes in its buffer and the rows it holds. */
export interface WindowState {
  format: PictureFormat;
  /** Byte addresses of each plane's row `top` (chroma: `top` >> subsampling) in wasm memory. */
  planes: [number, number, number];
  /** Row strides in bytes: luma, chroma. */
  strides: [number, number];
  /** The first luma row the buffer holds. */
  top: number;
  /** Luma rows above this one are final and can be read (until the decode goes on). */
  ready: number;
}

/**
 * One dav1d instance for one AVIF file (a fresh wasm instance per job, counted by wasm-memory.ts):
 * decodes the file's AV1 images one at a time into pictures the caller holds and releases.
 */
export class Dav1dCodec {
  private closed = false;
  /** A windowed decode is under way: between its yield points the instance's stack is its. */
  private windowedDecode = false;
  private readonly pictures: DecodedPicture[] = [];

  private constructor(
    private readonly wasm: WasmInstance<Dav1dModule>,
    private readonly decoder: number,
  ) {}

  /** A decoder refusing frames of more than `maxPixels` pixels before allocating for them. */
  static async open(maxPixels: number): Promise<Dav1dCodec> {
    const wasm = await openEmscripten<Dav1dModule>(dav1dFactory, dav1dWasm, { nsPerYieldUnit: NS_PER_DECODED_PIXEL, role: 'dav1d' });
    const decoder = guard(() => wasm.instance._avif_dav1d_open(Math.min(maxPixels, 2 ** 32 - 1)), wasm);
    if (decoder === 0) {
      wasm.release();
      throw outOfMemory();
    }
    return new Dav1dCodec(wasm, decoder);
  }

  memoryBuffer(): ArrayBuffer {
    return this.wasm.memory.buffer;
  }

  /** A picture handle to decode into (kept until the codec closes). */
  createPicture(): DecodedPicture {
    const handle = guard(() => this.wasm.instance._avif_dav1d_picture_create(), this.wasm);
    if (handle === 0) throw outOfMemory();
    const picture = new DecodedPicture(this, handle);
    this.pictures.push(picture);
    return picture;
  }

  /**
   * Decodes one AV1 image, whose data is `ranges` of `file` joined, into `picture` (releasing what it
   * held). The data is copied into wasm memory once and freed by dav1d when the frame is done.
   */
  decode(file: Uint8Array, ranges: readonly ByteRange[], picture: DecodedPicture, what: string): void {
    this.copyIn(file, ranges, picture);
    const status = guard(() => this.wasm.instance._avif_dav1d_decode(this.decoder, picture.handle), this.wasm);
    this.finish(status, picture, what);
  }

  /**
   * `decode` for a whole image (about a second for 12 MP): dav1d lets other runs in the isolate go
   * on after each row of superblocks while it decodes (codecs/common/yield.h).
   */
  async decodeYielding(file: Uint8Array, ranges: readonly ByteRange[], picture: DecodedPicture, what: string): Promise<void> {
    this.copyIn(file, ranges, picture);
    const { instance } = this.wasm;
    let status: number;
    try {
      status = await this.wasm.callYielding(instance._avif_dav1d_decode_entry(), this.decoder, picture.handle);
    } catch (error) {
      throw trapped(error, this.wasm);
    }
    this.finish(status, picture, what);
  }

  /**
   * `decodeYielding` into a window of rows (codecs/dav1d/avif_dav1d.c): after each row of
   * superblocks, `rowsReady` is told the window's state and may return a promise, until which the
   * decode waits (the rows it has are read meanwhile, then they move up or are overwritten). No
   * other call that waits may run on this instance meanwhile. A frame that can only be decoded
   * whole is FILE_TOO_LARGE: the plan chose the window because the whole picture does not fit.
   */
  async decodeWindowed(file: Uint8Array, ranges: readonly ByteRange[], picture: DecodedPicture, what: string, rowsReady: (state: WindowState) => Promise<void> | undefined): Promise<void> {
    this.copyIn(file, ranges, picture);
    const { instance } = this.wasm;
    const address = guard(() => instance._avif_dav1d_window(this.decoder), this.wasm);
    let ready = 0;
    this.wasm.atYield = () => {
      const state = this.windowState(address);
      if (state.ready <= ready) return undefined;
      ready = state.ready;
      return rowsReady(state);
    };
    let status: number;
    this.windowedDecode = true;
    try {
      status = await this.wasm.callYielding(instance._avif_dav1d_decode_windowed_entry(), this.decoder, picture.handle);
    } catch (error) {
      throw trapped(error, this.wasm);
    } finally {
      this.wasm.atYield = null;
      this.windowedDecode = false;
    }
    if (status === WHOLE_FRAME) {
      throw new AppError(
        'FILE_TOO_LARGE',
        'This AVIF image has to be decoded whole (it uses intra block copy), and at its size that needs more memory than a Worker has for one image. Ask for a smaller size or send a smaller image.',
        `avif: ${what} needs its whole picture`,
      );
    }
    this.finish(status, picture, what);
  }

  private windowState(address: number): WindowState {
    const f = new Int32Array(this.wasm.memory.buffer, address, WINDOW_FIELDS);
    return {
      format: { width: f[0], height: f[1], bitDepth: f[2] as 8 | 10 | 12, layout: f[3], matrix: f[9], fullRange: f[10] !== 0 },
      planes: [f[4], f[5], f[6]],
      strides: [f[7], f[8]],
      top: f[FIELDS],
      ready: f[FIELDS + 1],
    };
  }

  private copyIn(file: Uint8Array, ranges: readonly ByteRange[], picture: DecodedPicture): void {
    picture.release();
    const { instance } = this.wasm;
    const size = ranges.reduce((sum, range) => sum + range.end - range.start, 0);
    const input = guard(() => instance._avif_dav1d_input(this.decoder, size), this.wasm);
    if (input === 0) throw outOfMemory();
    let at = input;
    const heap = new Uint8Array(this.wasm.memory.buffer);
    for (const { start, end } of ranges) {
      heap.set(file.subarray(start, end), at);
      at += end - start;
    }
  }

  private finish(status: number, picture: DecodedPicture, what: string): void {
    if (status === NO_MEMORY) throw outOfMemory();
    if (status === UNSUPPORTED) throw unsupportedAvif(`an AV1 stream the decoder cannot read (${what})`);
    if (status !== 0) throw damaged(`avif: dav1d ${status === DAMAGED ? 'found damage in' : 'found no frame in'} ${what}`);
    picture.refresh(this.wasm.memory.buffer);
  }

  releasePicture(picture: DecodedPicture): void {
    if (!this.closed) this.wasm.instance._avif_dav1d_picture_release(picture.handle);
  }

  /** Frees everything and stops counting the wasm memory; safe to call twice. */
  close(): void {
    if (this.closed) return;
    if (this.windowedDecode) {
      // Its stack is in the instance: nothing may run there now. The waiting decode is dropped with it.
      this.closed = true;
      this.wasm.release(false);
      return;
    }
    try {
      for (const picture of this.pictures) this.wasm.instance._avif_dav1d_picture_destroy(picture.handle);
      this.wasm.instance._avif_dav1d_close(this.decoder);
    } catch {
      // A trapped instance is dropped whole; its memory goes with it.
    } finally {
      this.closed = true;
      this.wasm.release();
    }
  }
}

/** Calls into wasm; a trap (which the C code never means to cause) is the file's damage. */
function guard<T>(call: () => T, wasm: WasmInstance<Dav1dModule>): T {
  try {
    return call();
  } catch (error) {
    throw trapped(error, wasm);
  }
}

function trapped(error: unknown, wasm: WasmInstance<Dav1dModule>): unknown {
  if (!(error instanceof WebAssembly.RuntimeError)) return error;
  wasm.release();
  return damaged(`avif: dav1d trapped: ${error.message}`);
}

export function outOfMemory(): AppError {
  return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', 'avif: wasm memory could not grow');
}
