import decodeJpeg, { init as initDecoder } from '@jsquash/jpeg/decode';
import encodeJpeg, { init as initEncoder } from '@jsquash/jpeg/encode';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import type { CmykImage } from '../types';
import { toArrayBuffer, asImageData, fromImageData, initWithModule, lazyInit, withFreshInstanceOnFailure, type Codec } from './codec';
import { jpegComponentCount } from './jpeg-components';
import { decodeJpegComponents } from './vendor/jpeg-js-decoder.js';

const decoder = lazyInit(() => initWithModule(initDecoder, decoderWasm));
const encoder = lazyInit(() => initWithModule(initEncoder, encoderWasm));

export const jpegCodec: Codec = {
  async decode(bytes) {
    if (jpegComponentCount(bytes) === 4) return decodeCmyk(bytes);
    await decoder.ready();
    // preserveOrientation=false: orientation is applied by the pipeline, for every format alike.
    return withFreshInstanceOnFailure(decoder, async () => fromImageData(await decodeJpeg(toArrayBuffer(bytes), { preserveOrientation: false })));
  },
  async encode(image, quality) {
    await encoder.ready();
    return withFreshInstanceOnFailure(encoder, async () => new Uint8Array(await encodeJpeg(asImageData(image), { quality })));
  },
};

/**
 * jpeg-js's own guards stay as a backstop, above anything the pipeline lets through (it refuses
 * oversized images from the header). Its memory count is about 4 bytes per pixel and component
 * (coefficients, samples, output): 1 GB covers a 64 MP CMYK image. Exceeding it throws an error
 * that mentions memory, which the pipeline reports as CONVERSION_FAILED.
 */
const JPEG_JS_LIMITS = { maxResolutionInMP: 1000, maxMemoryUsageInMB: 1024 };

/**
 * mozjpeg in jSquash only outputs RGB(A), so 4-component JPEGs (CMYK, YCCK) go through jpeg-js's
 * decoder, which returns ink amounts and refuses a 4-component file without an Adobe marker.
 * Its chroma upsampling (4:2:0, 4:2:2, 4:4:0 YCCK) is libjpeg's "fancy" triangle filter, so it
 * matches libjpeg/sharp within a few levels (IDCT and colour-transform rounding); other subsampling
 * factors (e.g. 4:1:1) are upsampled nearest-neighbour, as libjpeg does.
 */
function decodeCmyk(bytes: Uint8Array): CmykImage {
  const { width, height, components, data } = decodeJpegComponents(bytes, JPEG_JS_LIMITS);
  if (components !== 4) throw new Error(`jpeg-js decoded ${components} components, expected 4`);
  return { colorModel: 'cmyk', data, width, height };
}
