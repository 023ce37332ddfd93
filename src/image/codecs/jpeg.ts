import decodeJpeg, { init as initDecoder } from '@jsquash/jpeg/decode';
import encodeJpeg, { init as initEncoder } from '@jsquash/jpeg/encode';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import { toArrayBuffer, asImageData, fromImageData, initWithModule, lazyInit, withFreshInstanceOnFailure, type Codec } from './codec';

const decoder = lazyInit(() => initWithModule(initDecoder, decoderWasm));
const encoder = lazyInit(() => initWithModule(initEncoder, encoderWasm));

export const jpegCodec: Codec = {
  async decode(bytes) {
    await decoder.ready();
    // preserveOrientation=false: orientation is applied by the pipeline, for every format alike.
    return withFreshInstanceOnFailure(decoder, async () => fromImageData(await decodeJpeg(toArrayBuffer(bytes), { preserveOrientation: false })));
  },
  async encode(image, quality) {
    await encoder.ready();
    return withFreshInstanceOnFailure(encoder, async () => new Uint8Array(await encodeJpeg(asImageData(image), { quality })));
  },
};
