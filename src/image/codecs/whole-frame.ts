import type { DecodeFacts, EncodeFacts } from '../formats';
import { MB, pixelsOf, resultBytes, type DecoderCost, type EncoderCost } from '../memory-plan';
import { collectFrame, frameSource, type RowDecoder, type RowEncoder } from '../rows';
import { isCmyk, type ImageFormat } from '../types';
import { cropRows } from '../crop';
import { pixelWords } from '../pixels';
import type { Codec } from './codec';

/*
 * Adapters for codecs that only decode and encode whole frames (jSquash's builds): the decoder's
 * frame is served as bands, and the encoder gets a frame collected from the bands. They hold a
 * frame, and the memory plan counts it; streaming codecs replace them format by format.
 */

export function wholeFrameDecoder(codec: Codec): RowDecoder {
  return {
    shrinkFactors: [1],
    async open(input, { region }) {
      const decoded = await codec.decode(input);
      const cmyk = isCmyk(decoded);
      const words = pixelWords(decoded.data);
      const source = frameSource(decoded, { model: cmyk ? 'cmyk' : 'rgba', alpha: !cmyk && hasTransparency(words), grey: !cmyk && isGrey(words) });
      return region ? cropRows(source, region) : source;
    },
  };
}

export function wholeFrameEncoder(codec: Codec): RowEncoder {
  return {
    placesOrientation: false,
    async encode(source, { quality }) {
      return codec.encode(await collectFrame(source), quality);
    },
  };
}

function hasTransparency(words: Int32Array): boolean {
  for (let i = 0; i < words.length; i++) if (words[i] >>> 24 !== 255) return true;
  return false;
}

function isGrey(words: Int32Array): boolean {
  for (let i = 0; i < words.length; i++) {
    const px = words[i];
    if ((px & 255) !== ((px >> 8) & 255) || (px & 255) !== ((px >> 16) & 255)) return false;
  }
  return true;
}

/** Every Emscripten codec instance of jSquash's builds starts with 16 MB of WebAssembly memory. */
const INITIAL_WASM = 16 * MB;

/** WebAssembly memory of a jSquash codec at its peak, as measured: per pixel plus a fixed part. */
export interface WasmCost {
  perPixel: number;
  fixed: number;
}

function wasmPeak(cost: WasmCost, pixels: number, extraBytes = 0): number {
  return Math.max(INITIAL_WASM, cost.perPixel * pixels + cost.fixed + extraBytes);
}

/** A whole-frame decoder: its memory (which also holds the file) and the frame copied out of it; then the frame. */
export function wholeFrameDecodeCost(cost: WasmCost, facts: DecodeFacts): DecoderCost {
  const frame = 4 * pixelsOf(facts.stored);
  return { open: wasmPeak(cost, pixelsOf(facts.stored), facts.inputBytes) + frame, streaming: frame };
}

/** A whole-frame encoder: its memory at its peak and the result, after the frame was collected. */
export function wholeFrameEncodeCost(cost: WasmCost, facts: EncodeFacts, format: ImageFormat): EncoderCost {
  const pixels = pixelsOf(facts.output);
  return { streaming: wasmPeak(cost, pixels) + 2 * resultBytes(format, pixels, facts.quality), collectsFrame: true };
}
