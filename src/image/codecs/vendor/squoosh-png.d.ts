/** One instance of squoosh's PNG codec (see squoosh-png.js): its own wasm memory, collected once unreferenced. */
export interface SquooshPng {
  /** PNG bytes of `data`: width * height RGBA samples of `bit_depth` bits (8 or 16). Throws on failure. */
  encode(data: Uint8Array | Uint8ClampedArray, width: number, height: number, bit_depth: number): Uint8Array;
  /** 8-bit RGBA pixels of a PNG (any bit depth or colour type). Throws (Error with the decoder's message) on a bad file. */
  decode(data: Uint8Array): { data: Uint8ClampedArray; width: number; height: number };
  /** The instance's memory: it only grows, by what the largest call needed. */
  memory: WebAssembly.Memory;
}

/** Instantiates `module` (@jsquash/png's squoosh_png_bg.wasm, compiled) afresh, synchronously. */
export function createSquooshPng(module: WebAssembly.Module): SquooshPng;
