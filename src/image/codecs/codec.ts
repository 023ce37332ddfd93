import type { DecodedImage, RgbaImage } from '../types';
import { trackMemory } from './wasm-memory';

export interface Codec {
  decode(bytes: Uint8Array): Promise<DecodedImage>;
  /** `quality` is 1..100; lossless codecs ignore it. */
  encode(image: RgbaImage, quality: number): Promise<Uint8Array>;
  /** Bytes of this codec's current WebAssembly instances (what stays held between jobs). */
  memoryBytes?(): number;
}

/**
 * The jSquash codecs take an ImageData-like object and some read `data.buffer` whole,
 * so pixels must sit alone in their own ArrayBuffer.
 */
interface ImageDataLike {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

export function asImageData(image: RgbaImage): ImageDataLike {
  const { data, width, height } = image;
  return { data: new Uint8ClampedArray(toArrayBuffer(data)), width, height };
}

export function fromImageData(image: { data: ArrayLike<number> & ArrayBufferView; width: number; height: number }): RgbaImage {
  const { data, width, height } = image;
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height };
}

export interface CodecInstance {
  ready(): Promise<void>;
  /** Drop the instance: the next call makes a fresh one (after a trap, or to give memory back). */
  reset(): void;
  /** Bytes of the current instance's memory (0 before the first use). */
  memoryBytes(): number;
  /** After a large job: a fresh instance now, so the grown memory can be collected. */
  releaseIfLarge(): void;
}

// A fresh instance starts with a few MB; anything far beyond is pixels of a finished job.
const RELEASE_ABOVE_BYTES = 32 * 1024 * 1024;

/**
 * One jSquash (Emscripten) codec, instantiated from its compiled module once per isolate.
 * Emscripten modules can be left unusable after a trap (e.g. an abort on a corrupt file), so a
 * failed call asks for a fresh instance next time. jSquash's typings omit the
 * `init(module, overrides)` form that Workers need (no fetch of .wasm URLs there).
 */
export function codecInstance(init: (...args: never[]) => Promise<unknown>, module: WebAssembly.Module): CodecInstance {
  let memory: WebAssembly.Memory | undefined;
  const instantiateWasm = (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) => {
    const instance = new WebAssembly.Instance(module, imports);
    memory = trackMemory(instance.exports);
    receive(instance);
    return instance.exports;
  };
  const start = () => (init as unknown as (module: WebAssembly.Module, overrides: object) => Promise<unknown>)(module, { instantiateWasm });
  const state = lazyInit(start);
  return {
    ...state,
    memoryBytes: () => memory?.buffer.byteLength ?? 0,
    releaseIfLarge() {
      if ((memory?.buffer.byteLength ?? 0) <= RELEASE_ABOVE_BYTES) return;
      state.reset();
      // Instantiating again replaces jSquash's reference to the old instance (some codecs'
      // start-up finishes a tick later); the response does not wait for it.
      state.ready().catch(() => undefined);
    },
  };
}

/** Runs `init` once per isolate; `reset` makes the next `ready` run it again. */
export function lazyInit(init: () => Promise<unknown> | void): { ready(): Promise<void>; reset(): void } {
  let pending: Promise<void> | undefined;
  return {
    ready() {
      pending ??= Promise.resolve(init()).then(
        () => undefined,
        (error) => {
          pending = undefined; // a failed start-up is retried by the next call
          throw error;
        },
      );
      return pending;
    },
    reset() {
      pending = undefined;
    },
  };
}

/** Runs one codec call: a failure leaves a fresh instance for the next, a large job gives its memory back. */
export async function runCodec<T>(instance: CodecInstance, run: () => Promise<T>): Promise<T> {
  await instance.ready();
  try {
    return await run();
  } catch (error) {
    instance.reset();
    throw error;
  } finally {
    instance.releaseIfLarge();
  }
}

/** jSquash's typings omit the `init(module)` overload (used for the PNG codec, which is wasm-bindgen, not Emscripten). */
export function initWithModule(init: (...args: never[]) => Promise<unknown>, module: WebAssembly.Module): Promise<unknown> {
  return (init as unknown as (module: WebAssembly.Module) => Promise<unknown>)(module);
}

/** The bytes alone in their own ArrayBuffer: the same buffer when they fill it, else a copy. */
export function toArrayBuffer(bytes: Uint8Array | Uint8ClampedArray): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}
