import pngWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module';
import { fromImageData, wasmCodec, type Codec } from './codec';
import { createSquooshPng } from './vendor/squoosh-png.js';

// One wasm-bindgen module serves both directions. jSquash's glue keeps a single instance for the
// isolate's lifetime (one 3000x3000 encode grows it to ~164 MB, held for good), so the glue is
// vendored as a factory and gets a fresh instance per job, like the Emscripten codecs.
const png = wasmCodec(async () => {
  const instance = createSquooshPng(pngWasm);
  return { instance, memory: instance.memory };
});

export const pngCodec: Codec = {
  async decode(bytes) {
    // What @jsquash/png/decode does with bitDepth 8 (the pipeline never asks for 16).
    return fromImageData(await png.run((codec) => codec.decode(bytes)));
  },
  async encode(image) {
    return png.run((codec) => codec.encode(image.data, image.width, image.height, 8));
  },
};
