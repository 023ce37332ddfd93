import type { DecodedImage, RgbaImage } from '../types';
import { trackMemory } from './wasm-memory';

export interface Codec {
  decode(bytes: Uint8Array): Promise<DecodedImage>;
  /** `quality` is 1..100; lossless codecs ignore it. */
  encode(image: RgbaImage, quality: number): Promise<Uint8Array>;
}

/**
 * One WebAssembly codec, instantiated afresh for every job and dropped after it. An instance
 * starts with 16 MB of memory and keeps whatever its largest call grew it to (a 12 MP WebP encode:
 * 159 MB), and six codecs kept warm would hold about 100 MB of a 128 MB isolate doing nothing.
 * Instantiating an already compiled module takes 0.5-10 ms, little beside any decode or encode.
 * A fresh instance per job also means a trap (an abort on a corrupt file) never leaves a broken
 * instance behind.
 */
export interface WasmCodec<T> {
  /** Runs `job` on a fresh instance; several calls inside one job share it (banded work). */
  run<R>(job: (instance: T) => R | Promise<R>): Promise<R>;
}

export function wasmCodec<T>(create: () => Promise<{ instance: T; memory: WebAssembly.Memory }>): WasmCodec<T> {
  return {
    async run(job) {
      const { instance, memory } = await create();
      const untrack = trackMemory(memory);
      try {
        return await job(instance);
      } finally {
        untrack();
      }
    },
  };
}

/**
 * jSquash's factory typings need DOM and Emscripten globals this project doesn't load, so each
 * codec file states the few methods it calls (`emscriptenCodec<ItsInterface>`).
 */
type EmscriptenFactory = unknown;

/** What the jSquash decoders return (their ImageData stand-in on Workers). */
export interface DecodedPixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

type Pixels = Uint8Array | Uint8ClampedArray;

/** The encode method every jSquash Emscripten encoder has; `null` means it failed. */
export interface EmscriptenEncoder<Options> {
  encode(pixels: Pixels, width: number, height: number, options: Options): Uint8Array | null;
}

/**
 * A jSquash Emscripten codec, called through its module factory rather than jSquash's wrapper,
 * which keeps one instance for the isolate's lifetime.
 */
export function emscriptenCodec<T>(factory: EmscriptenFactory, module: WebAssembly.Module): WasmCodec<T> {
  return wasmCodec(() => instantiateEmscripten<T>(factory, module));
}

/** A live codec instance whose WebAssembly memory is counted until `release()`. */
export interface WasmInstance<T> {
  instance: T;
  memory: WebAssembly.Memory;
  /** Stops counting the memory and drops the instance; safe to call more than once. */
  release(): void;
}

/**
 * A fresh instance of an Emscripten module for a job that outlives one call (a streaming decoder or
 * encoder handing out bands across awaits). `overrides` become properties of the Emscripten Module
 * object, where the module's imported JavaScript functions (EM_JS) find their callbacks.
 */
export async function openEmscripten<T>(factory: EmscriptenFactory, module: WebAssembly.Module, overrides: object = {}): Promise<WasmInstance<T>> {
  const { instance, memory } = await instantiateEmscripten<T>(factory, module, overrides);
  const untrack = trackMemory(memory);
  let live = true;
  return {
    instance,
    memory,
    release() {
      if (!live) return;
      live = false;
      untrack();
    },
  };
}

/** Workers cannot fetch .wasm URLs, so the compiled module (a static import) is instantiated through `instantiateWasm`. */
async function instantiateEmscripten<T>(factory: EmscriptenFactory, module: WebAssembly.Module, overrides: object = {}): Promise<{ instance: T; memory: WebAssembly.Memory }> {
  let memory: WebAssembly.Memory | undefined;
  const instance = (await (factory as (options: object) => Promise<T>)({
    ...overrides,
    noInitialRun: true,
    instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
      const wasm = new WebAssembly.Instance(module, imports);
      memory = Object.values(wasm.exports).find((value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory);
      receive(wasm);
      return wasm.exports;
    },
  })) as T;
  if (!memory) throw new Error('codec instance has no exported memory');
  return { instance, memory };
}

export function fromImageData(image: { data: ArrayLike<number> & ArrayBufferView; width: number; height: number }): RgbaImage {
  const { data, width, height } = image;
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height };
}

/** The bytes alone in their own ArrayBuffer: the same buffer when they fill it, else a copy. */
export function toArrayBuffer(bytes: Uint8Array | Uint8ClampedArray): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}
