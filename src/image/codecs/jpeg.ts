import decodeJpeg, { init as initDecoder } from '@jsquash/jpeg/decode';
import encodeJpeg, { init as initEncoder } from '@jsquash/jpeg/encode';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import { damaged } from '../bytes';
import { readJpegDimensions } from '../header/jpeg';
import type { CmykImage, Dimensions } from '../types';
import { toArrayBuffer, asImageData, fromImageData, codecInstance, runCodec, type Codec } from './codec';
import { jpegComponentCount } from './jpeg-components';
import { decodeJpegComponents } from './vendor/jpeg-js-decoder.js';

const decoder = codecInstance(initDecoder, decoderWasm);
const encoder = codecInstance(initEncoder, encoderWasm);

/**
 * mozjpeg's progressive mode searches many scan layouts, which made a 12 MP encode take 2.8 s.
 * Baseline with optimised Huffman tables took 1.6 s for 2% more bytes at the same PSNR (36.9 dB;
 * the file is still 26% smaller than sharp's default at q80, which scores 36.5 dB). Trellis
 * quantisation stays on: jSquash's build has no switch for it.
 */
const ENCODE_SPEED_OPTIONS = { baseline: true, progressive: false, optimize_coding: true };

export const jpegCodec: Codec = {
  memoryBytes: () => decoder.memoryBytes() + encoder.memoryBytes(),
  async decode(bytes) {
    if (jpegComponentCount(bytes) === 4) return decodeCmyk(bytes);
    // preserveOrientation=false: orientation is applied by the pipeline, for every format alike.
    return runCodec(decoder, async () => fromImageData(await decodeJpeg(toArrayBuffer(bytes), { preserveOrientation: false })));
  },
  async encode(image, quality) {
    return runCodec(encoder, async () => new Uint8Array(await encodeJpeg(asImageData(image), { quality, ...ENCODE_SPEED_OPTIONS })));
  },
};

/**
 * mozjpeg in jSquash only outputs RGB(A), so 4-component JPEGs (CMYK, YCCK) go through jpeg-js's
 * decoder, which returns ink amounts (Adobe's inverted storage undone, also when its marker was lost).
 * Its chroma upsampling (4:2:0, 4:2:2, 4:4:0 YCCK) is libjpeg's "fancy" triangle filter, so it
 * matches libjpeg/sharp within a few levels (IDCT and colour-transform rounding); other subsampling
 * factors (e.g. 4:1:1) are upsampled nearest-neighbour, as libjpeg does.
 */
function decodeCmyk(bytes: Uint8Array): CmykImage {
  const frame = readJpegDimensions(bytes);
  const { width, height, components, data } = withinFrame(frame, () => decodeJpegComponents(bytes, jpegJsLimits(frame)));
  if (components !== 4) throw new Error(`jpeg-js decoded ${components} components, expected 4`);
  return { colorModel: 'cmyk', data, width, height };
}

/**
 * jpeg-js's guards, set from the frame size the pipeline already checked: a file whose data asks
 * for more (a frame header hidden further on, say) is refused before jpeg-js allocates for it. Its
 * memory count is about 4 bytes per pixel and component (coefficients, samples) plus the output.
 */
function jpegJsLimits({ width, height }: Dimensions): { maxResolutionInMP: number; maxMemoryUsageInMB: number } {
  const pixels = width * height;
  return { maxResolutionInMP: pixels / 1e6, maxMemoryUsageInMB: Math.ceil((pixels * 24) / 2 ** 20) + 16 };
}

/** jpeg-js's guard errors mean the file asks for more than its frame header: damage, not a lack of memory. */
function withinFrame<T>(frame: Dimensions, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof Error && /^max(Resolution|MemoryUsage)/.test(error.message)) {
      throw damaged(`jpeg: the data needs more than its ${frame.width}x${frame.height} frame header allows (${error.message})`);
    }
    throw error;
  }
}
