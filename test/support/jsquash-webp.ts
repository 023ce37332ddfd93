// jSquash's WebP codec (whole frames): the reference our libwebp build is compared with in tests.
import webpDecoder from '@jsquash/webp/codec/dec/webp_dec.js';
import decoderWasm from '@jsquash/webp/codec/dec/webp_dec.wasm';
// Workers support wasm SIMD: the SIMD build of the encoder, with its own binary.
import webpEncoder from '@jsquash/webp/codec/enc/webp_enc_simd.js';
import encoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { defaultOptions } from '@jsquash/webp/meta.js';
import { firstFrameAsStill, placeOnCanvas } from './webp-reference';
import type { RgbaImage } from '../../src/image/types';
import { fromImageData, jsquashCodec, type DecodedPixels, type EmscriptenEncoder } from './jsquash';

const decoder = jsquashCodec<{ decode(bytes: Uint8Array): DecodedPixels | null }>(webpDecoder, decoderWasm);
const encoder = jsquashCodec<EmscriptenEncoder<typeof defaultOptions>>(webpEncoder, encoderWasm);

async function decodeStill(bytes: Uint8Array) {
  const image = await decoder.run((webp) => webp.decode(bytes));
  if (!image) throw new Error('libwebp could not decode the file');
  return fromImageData(image);
}

export const webpCodec = {
  async decode(bytes: Uint8Array): Promise<RgbaImage> {
    // libwebp's still decoder refuses animations: decode the first frame as a still (decisions.md).
    const animated = firstFrameAsStill(bytes);
    if (animated) return placeOnCanvas(await decodeStill(animated.still), animated.canvas, animated.frame);
    return decodeStill(bytes);
  },
  async encode(image: RgbaImage, quality: number): Promise<Uint8Array> {
    const bytes = await encoder.run((webp) => webp.encode(image.data, image.width, image.height, { ...defaultOptions, quality }));
    if (!bytes) throw new Error('libwebp could not encode the image');
    return new Uint8Array(bytes);
  },
};
