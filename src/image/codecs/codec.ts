import type { DecodedImage, RgbaImage } from '../types';

export interface Codec {
  decode(bytes: Uint8Array): Promise<DecodedImage>;
  /** `quality` is 1..100; lossless codecs ignore it. */
  encode(image: RgbaImage, quality: number): Promise<Uint8Array>;
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

/**
 * Runs `init` once per isolate. Emscripten modules can be left unusable after a trap
 * (e.g. an abort on a corrupt file), so a failed call asks for a fresh instance next time.
 */
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

export async function withFreshInstanceOnFailure<T>(state: { reset(): void }, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    state.reset();
    throw error;
  }
}

/** jSquash's typings omit the `init(module)` overload that Workers need (no fetch of .wasm URLs there). */
export function initWithModule(init: (...args: never[]) => Promise<unknown>, module: WebAssembly.Module): Promise<unknown> {
  return (init as unknown as (module: WebAssembly.Module) => Promise<unknown>)(module);
}

/** The bytes alone in their own ArrayBuffer: the same buffer when they fill it, else a copy. */
export function toArrayBuffer(bytes: Uint8Array | Uint8ClampedArray): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}
