/**
 * jSquash's Emscripten codecs as test references: each call runs on a fresh instance of the
 * module (through the service's own instantiation, codecs/codec.ts), released afterwards.
 */
import { openEmscripten, type EmscriptenEncoder } from '../../src/image/codecs/codec';
import type { RgbaImage } from '../../src/image/types';

export type { EmscriptenEncoder };

/** What the jSquash decoders return (their ImageData stand-in on Workers). */
export interface DecodedPixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

export interface JsquashCodec<T> {
  run<R>(job: (instance: T) => R | Promise<R>): Promise<R>;
}

export function jsquashCodec<T>(factory: unknown, module: WebAssembly.Module): JsquashCodec<T> {
  return {
    async run(job) {
      const codec = await openEmscripten<T>(factory, module);
      try {
        return await job(codec.instance);
      } finally {
        codec.release();
      }
    },
  };
}

export function fromImageData(image: DecodedPixels): RgbaImage {
  const { data, width, height } = image;
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height };
}
