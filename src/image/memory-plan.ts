import type { Dimensions, ImageFormat } from './types';
import { resizeScratchBytes } from './resize';

/*
 * How many bytes one pipeline run will hold at its fullest, predicted from the header before
 * anything is decoded, so a request that cannot fit a Worker's memory is refused up front instead
 * of killing the isolate (a deployed isolate has 128 MB and local workerd enforces nothing).
 *
 * The codec figures are upper bounds fitted to measurements of fresh instances at 1, 2, 4, 8 and
 * 12 MP (`npm run bench -- --codec-memory`, README "Memory"); test/workers/memory-budget.test.ts
 * runs the real pipeline and checks that it never holds more than predicted.
 */

const MB = 1 << 20;

/** Every Emscripten codec instance starts with 16 MB of WebAssembly memory. */
const INITIAL_WASM = 16 * MB;

interface WasmCost {
  perPixel: number;
  fixed: number;
}

/** A decoder's memory at its peak: the whole decoded image plus its copy of the file, inside wasm. */
const DECODE: Record<ImageFormat, WasmCost> = {
  // Banded decoding covers baseline files; those decoded whole are mostly progressive, where
  // mozjpeg also keeps every DCT coefficient (12 MP: 94.4 MB, baseline 51.6 MB).
  jpeg: { perPixel: 10, fixed: 4 * MB },
  png: { perPixel: 4, fixed: 4 * MB }, // 12 MP: 71.7 MB with a 24 MB file
  webp: { perPixel: 5, fixed: 2 * MB }, // 12 MP: 57.9 MB (libwebp decodes through YUV)
  avif: { perPixel: 22, fixed: 16 * MB }, // 1 MP: 27.8 MB, 12 MP: 224.9 MB (dav1d's frame pool, YUV and RGBA)
};

/** An encoder's memory at its peak: its copy of the pixels, working buffers and the file. */
const ENCODE: Record<ImageFormat, WasmCost> = {
  jpeg: { perPixel: 16.7, fixed: 2 * MB }, // 12 MP: 190.4 MB (trellis keeps whole-image buffers)
  png: { perPixel: 23.5, fixed: 2 * MB }, // photo 12 MP: 159.9 MB; white noise 4000x3000: 267.1 MB
  webp: { perPixel: 13.9, fixed: 2 * MB }, // 12 MP: 158.6 MB
  avif: { perPixel: 29, fixed: 14 * MB }, // 12 MP: 344.4 MB
};

/**
 * Banded JPEG work (jpeg-entropy/) runs mozjpeg on bands of at most this many pixels, so its
 * memory stays at the initial 16 MB whatever the image size (1 MP encodes measured 16.2 MB).
 */
export const JPEG_BAND_PIXELS = 1_000_000;
const BANDED_WASM = INITIAL_WASM + MB / 2;

/**
 * Bytes of a result file, as a bound: the sizes of white noise (the least compressible picture)
 * measured per format and quality; real photos come out several times smaller.
 */
function resultBytes(format: ImageFormat, pixels: number, quality: number): number {
  const perPixel =
    format === 'png' ? 4.1
    : format === 'webp' ? 1.15
    : format === 'jpeg' ? (quality <= 80 ? 0.8 : quality <= 90 ? 1.75 : 3)
    : quality <= 90 ? 1.1 : 4;
  return perPixel * pixels + MB / 4;
}

function wasmPeak(cost: WasmCost, pixels: number, extraBytes = 0): number {
  return Math.max(INITIAL_WASM, cost.perPixel * pixels + cost.fixed + extraBytes);
}

export interface MemoryPlan {
  inputFormat: ImageFormat;
  inputBytes: number;
  /** Size as stored (before orientation). */
  input: Dimensions;
  /** Decoded in bands into the final frame (oriented, and only the crop region when cropping). */
  decodeInBands: boolean;
  /** Pixels of the frame the decode step leaves: the crop region when the bands place only that. */
  decodedPixels: number;
  /** A separate oriented copy of the decoded frame (when the decode could not orient in place). */
  orientationCopy: boolean;
  /** A separate cropped copy of the decoded frame. */
  cropCopy: boolean;
  resize: { from: Dimensions; to: Dimensions } | null;
  outputFormat: ImageFormat;
  output: Dimensions;
  encodeInBands: boolean;
  quality: number;
}

export type Stage = 'decode' | 'transform' | 'encode';

/** Bytes held at the fullest moment of each stage; the run's peak is the largest. */
export function stagePeaks(plan: MemoryPlan): Record<Stage, number> {
  const held = plan.inputBytes;
  const inputPixels = plan.input.width * plan.input.height;
  const frame = 4 * plan.decodedPixels;
  const outputPixels = plan.output.width * plan.output.height;
  const outputFrame = 4 * outputPixels;

  // Whole decode: the decoder's memory and the JS copy of its output coexist until it returns.
  const decode = plan.decodeInBands
    ? held + frame + BANDED_WASM + 4 * JPEG_BAND_PIXELS
    : held + wasmPeak(DECODE[plan.inputFormat], inputPixels, plan.inputBytes) + 4 * inputPixels;

  let transform = held + frame;
  if (plan.orientationCopy) transform = Math.max(transform, held + 2 * frame);
  let current = plan.decodedPixels;
  if (plan.cropCopy) {
    transform = Math.max(transform, held + frame + 4 * plan.output.width * plan.output.height);
    current = outputPixels;
  }
  if (plan.resize) {
    const { from, to } = plan.resize;
    transform = Math.max(transform, held + 4 * current + resizeScratchBytes(from, to) + outputFrame);
  }

  const result = resultBytes(plan.outputFormat, outputPixels, plan.quality);
  const encode = plan.encodeInBands
    ? held + outputFrame + BANDED_WASM + 4 * JPEG_BAND_PIXELS + 2 * result // the bands' files, then the stitched file
    : held + outputFrame + wasmPeak(ENCODE[plan.outputFormat], outputPixels) + result;

  return { decode, transform, encode };
}

export function peakBytes(plan: MemoryPlan): number {
  const stages = stagePeaks(plan);
  return Math.max(stages.decode, stages.transform, stages.encode);
}

/**
 * The largest pixel count for which `fits(pixels)` holds, for a monotone `fits`: the limits the
 * README and error messages state are derived from the same model as the check itself.
 */
export function largestFitting(fits: (pixels: number) => boolean, ceiling = 1e9): number {
  if (!fits(1)) return 0;
  let low = 1;
  let high = ceiling;
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}
