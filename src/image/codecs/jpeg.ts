import mozjpegDecoder from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import mozjpegEncoder from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import { defaultOptions } from '@jsquash/jpeg/meta.js';
import { damaged } from '../bytes';
import { readJpegDimensions } from '../header/jpeg';
import type { CmykImage, Dimensions, RgbaImage } from '../types';
import { emscriptenCodec, fromImageData, type Codec, type DecodedPixels, type EmscriptenEncoder } from './codec';
import { jpegComponentCount } from './jpeg-components';
import { decodeJpegComponents } from './vendor/jpeg-js-decoder.js';

interface Mozjpeg {
  decode(bytes: Uint8Array, preserveOrientation: boolean): DecodedPixels | null;
}

const decoder = emscriptenCodec<Mozjpeg>(mozjpegDecoder, decoderWasm);
const encoder = emscriptenCodec<EmscriptenEncoder<ReturnType<typeof encodeOptions>>>(mozjpegEncoder, encoderWasm);

/**
 * mozjpeg's progressive mode searches many scan layouts, which made a 12 MP encode take 2.8 s.
 * Baseline with optimised Huffman tables took 1.6 s for 2% more bytes at the same PSNR (36.9 dB;
 * the file is still 26% smaller than sharp's default at q80, which scores 36.5 dB). Trellis
 * quantisation stays on: jSquash's build has no switch for it.
 */
const ENCODE_SPEED_OPTIONS = { baseline: true, progressive: false, optimize_coding: true };

const encodeOptions = (quality: number) => ({ ...defaultOptions, quality, ...ENCODE_SPEED_OPTIONS });

/** preserveOrientation=false: orientation is applied by the pipeline, for every format alike. */
function decodeRgba(mozjpeg: Mozjpeg, bytes: Uint8Array): RgbaImage {
  const image = mozjpeg.decode(bytes, false);
  if (!image) throw new Error('mozjpeg could not decode the file');
  return fromImageData(image);
}

function encoded(bytes: Uint8Array | null): Uint8Array {
  if (!bytes) throw new Error('mozjpeg could not encode the image');
  return bytes;
}

export const jpegCodec: Codec = {
  async decode(bytes) {
    if (jpegComponentCount(bytes) === 4) return decodeCmyk(bytes);
    return decoder.run((mozjpeg) => decodeRgba(mozjpeg, bytes));
  },
  async encode(image, quality) {
    return encoder.run((mozjpeg) => encoded(mozjpeg.encode(image.data, image.width, image.height, encodeOptions(quality))));
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
