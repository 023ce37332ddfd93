import decodePng, { init as initDecoder } from '@jsquash/png/decode';
import encodePng from '@jsquash/png/encode';
import pngWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module';
import { toArrayBuffer, asImageData, fromImageData, initWithModule, lazyInit, type Codec } from './codec';

// One wasm-bindgen module serves both directions. wasm-bindgen keeps its instance for the
// isolate's lifetime (it cannot be re-instantiated); the Rust decoder returns errors rather than trapping.
const module = lazyInit(() => initWithModule(initDecoder, pngWasm));

export const pngCodec: Codec = {
  async decode(bytes) {
    await module.ready();
    return fromImageData(await decodePng(toArrayBuffer(bytes)));
  },
  async encode(image) {
    await module.ready();
    return new Uint8Array(await encodePng(asImageData(image)));
  },
};
