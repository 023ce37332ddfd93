import decodeAvif, { init as initDecoder } from '@jsquash/avif/decode';
import encodeAvif, { init as initEncoder } from '@jsquash/avif/encode';
import decoderWasm from '@jsquash/avif/codec/dec/avif_dec.wasm';
// Workers have no threads: the single-threaded encoder build is the one that runs there.
import encoderWasm from '@jsquash/avif/codec/enc/avif_enc.wasm';
import { toArrayBuffer, asImageData, fromImageData, initWithModule, lazyInit, withFreshInstanceOnFailure, type Codec } from './codec';

const decoder = lazyInit(() => initWithModule(initDecoder, decoderWasm));
const encoder = lazyInit(() => initWithModule(initEncoder, encoderWasm));

export const avifCodec: Codec = {
  async decode(bytes) {
    await decoder.ready();
    return withFreshInstanceOnFailure(decoder, async () => {
      const image = await decodeAvif(toArrayBuffer(bytes));
      if (!image) throw new Error('AVIF decoder returned no image');
      return fromImageData(image);
    });
  },
  async encode(image, quality) {
    await encoder.ready();
    return withFreshInstanceOnFailure(encoder, async () => new Uint8Array(await encodeAvif(asImageData(image), { quality, speed: 8 })));
  },
};
