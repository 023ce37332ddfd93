/**
 * `npm run bench -- --codec-memory`: the WebAssembly memory each jSquash codec reaches (a fresh
 * instance per call, so the figure is that call's peak: wasm memories never shrink) for crops of
 * the 12 MP benchmark photo at 1 to 12 MP. These measurements are what src/image/memory-plan.ts's
 * per-pixel figures are fitted to.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSquooshPng } from '../src/image/codecs/vendor/squoosh-png.js';

type WebAssemblyModule = Parameters<typeof createSquooshPng>[0];

const jsquash = path.resolve(import.meta.dirname, '../node_modules/@jsquash');
const MB = 2 ** 20;
// bench/tsconfig.json has Node's types only; WebAssembly is Node's global all the same.
const { WebAssembly: Wasm } = globalThis as unknown as { WebAssembly: WasmApi };

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: abstract new () => { buffer: ArrayBuffer };
}

interface EmscriptenCodec {
  decode(bytes: Uint8Array, ...options: unknown[]): { data: Uint8ClampedArray; width: number; height: number };
  encode(pixels: Uint8ClampedArray, width: number, height: number, options: object): Uint8Array;
}

/** A fresh instance of one codec and the memory it grows. */
async function fresh(factoryPath: string, wasmPath: string): Promise<{ codec: EmscriptenCodec; memory: () => number }> {
  const factory = (await import(path.join(jsquash, factoryPath))).default;
  const module = new Wasm.Module(readFileSync(path.join(jsquash, wasmPath)));
  let memory: { buffer: ArrayBuffer } | undefined;
  const codec = await factory({
    noInitialRun: true,
    instantiateWasm(imports: object, receive: (instance: object) => void) {
      const instance = new Wasm.Instance(module, imports);
      memory = Object.values(instance.exports).find((value) => value instanceof Wasm.Memory) as { buffer: ArrayBuffer };
      receive(instance);
      return instance.exports;
    },
  });
  return { codec, memory: () => memory!.buffer.byteLength };
}

const CODECS = {
  jpeg: { dec: ['jpeg/codec/dec/mozjpeg_dec.js', 'jpeg/codec/dec/mozjpeg_dec.wasm'], enc: ['jpeg/codec/enc/mozjpeg_enc.js', 'jpeg/codec/enc/mozjpeg_enc.wasm'], meta: 'jpeg/meta.js' },
  webp: { dec: ['webp/codec/dec/webp_dec.js', 'webp/codec/dec/webp_dec.wasm'], enc: ['webp/codec/enc/webp_enc_simd.js', 'webp/codec/enc/webp_enc_simd.wasm'], meta: 'webp/meta.js' },
  avif: { dec: ['avif/codec/dec/avif_dec.js', 'avif/codec/dec/avif_dec.wasm'], enc: ['avif/codec/enc/avif_enc.js', 'avif/codec/enc/avif_enc.wasm'], meta: 'avif/meta.js' },
} as const;

export async function measureCodecMemory(photo: string, megapixels: number[]): Promise<void> {
  const decoder = await fresh(CODECS.jpeg.dec[0], CODECS.jpeg.dec[1]);
  const full = decoder.codec.decode(readFileSync(photo), false);
  for (const mp of megapixels) {
    const width = Math.min(full.width, Math.round(Math.sqrt((mp * 1e6 * 4) / 3)));
    const height = Math.min(full.height, Math.round((width * 3) / 4));
    const pixels = new Uint8ClampedArray(width * height * 4);
    for (let y = 0; y < height; y++) pixels.set(full.data.subarray(y * full.width * 4, (y * full.width + width) * 4), y * width * 4);
    const cells = [`${mp} MP (${width}x${height})`];
    for (const [name, paths] of Object.entries(CODECS)) {
      const { defaultOptions } = await import(path.join(jsquash, paths.meta));
      const speed = mp <= 1.2 ? 7 : mp <= 3.5 ? 8 : 9;
      const options = { ...defaultOptions, quality: 80, ...(name === 'jpeg' ? { baseline: true, progressive: false } : name === 'avif' ? { speed } : {}) };
      const encoder = await fresh(paths.enc[0], paths.enc[1]);
      const file = encoder.codec.encode(pixels, width, height, options);
      const encoded = encoder.memory();
      const again = await fresh(paths.dec[0], paths.dec[1]);
      again.codec.decode(file, ...(name === 'jpeg' ? [false] : name === 'avif' ? [8] : []));
      cells.push(`${name}: encode ${(encoded / MB).toFixed(1)} MB, decode ${(again.memory() / MB).toFixed(1)} MB`);
    }
    // PNG: the vendored wasm-bindgen glue, one instance per call as in the Worker.
    const pngModule = new Wasm.Module(readFileSync(path.join(jsquash, 'png/codec/pkg/squoosh_png_bg.wasm')));
    const pngEncoder = createSquooshPng(pngModule as WebAssemblyModule);
    const png = pngEncoder.encode(pixels, width, height, 8);
    const pngDecoder = createSquooshPng(pngModule as WebAssemblyModule);
    pngDecoder.decode(png);
    cells.push(`png: encode ${(pngEncoder.memory.buffer.byteLength / MB).toFixed(1)} MB, decode ${(pngDecoder.memory.buffer.byteLength / MB).toFixed(1)} MB`);
    console.log(cells.join(' | '));
  }
}
