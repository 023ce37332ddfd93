import decodeWebp, { init as initDecoder } from '@jsquash/webp/decode';
import encodeWebp, { init as initEncoder } from '@jsquash/webp/encode';
import decoderWasm from '@jsquash/webp/codec/dec/webp_dec.wasm';
// Workers support wasm SIMD; the encoder picks its SIMD build, which must get the SIMD binary.
import encoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { firstFrameAsStill, placeOnCanvas } from '../webp-first-frame';
import { toArrayBuffer, asImageData, fromImageData, codecInstance, runCodec, type Codec } from './codec';

const decoder = codecInstance(initDecoder, decoderWasm);
const encoder = codecInstance(initEncoder, encoderWasm);

export const webpCodec: Codec = {
  memoryBytes: () => decoder.memoryBytes() + encoder.memoryBytes(),
  async decode(bytes) {
    // libwebp's still decoder refuses animations: decode the first frame as a still (decisions.md).
    const animated = firstFrameAsStill(bytes);
    if (animated) {
      const frame = await runCodec(decoder, async () => fromImageData(await decodeWebp(toArrayBuffer(animated.still))));
      return placeOnCanvas(frame, animated.canvas, animated.frame);
    }
    return runCodec(decoder, async () => fromImageData(await decodeWebp(toArrayBuffer(bytes))));
  },
  async encode(image, quality) {
    return runCodec(encoder, async () => new Uint8Array(await encodeWebp(asImageData(image), { quality })));
  },
};
