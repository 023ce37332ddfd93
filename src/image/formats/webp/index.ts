import { startsWith } from '../../bytes';
import { defineFormat, type EncodeFacts } from '../format';
import { openWebpDecode } from './decode';
import { webpEncoder } from './encode';
import { readWebpHeader, verifyFirstFrame } from './header';
import { WEBP_BAND_ROWS, webpDecoderWasmBytes, webpEncodedBytesMax, webpEncoderImportWasmBytes, webpEncoderWasmBytes, webpResultBytes } from './memory';

const MiB = 2 ** 20;
import { stripWebp } from './strip';

export const webp = defineFormat({
  name: 'webp',
  aliases: [],
  extension: 'webp',
  mimeType: 'image/webp',
  label: 'WebP',
  sniff: (bytes) => startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBP'),
  readHeader: readWebpHeader,
  verify: verifyFirstFrame,
  strip: stripWebp,
  decode: openWebpDecode,
  // The encode proper is one call that yields on its own (libwebp.ts); bands are imported into its picture.
  work: { decode: 20, encode: 10 },
  cost: { decode: 20, encode: 100, encoderMs: 3 },
  shrinkFactors: [1],
  maxDimension: 16_383,
  supportsAlpha: true,
  // Where the bound does not fit, the encoder gets what remains, down to a fifth of it: 0.11 bytes a
  // pixel at quality 80, what the 12-48 MP test photos come out at (0.08-0.12; docs/performance.md).
  resultMayBeCapped: true,
  resultCapFloor: 1 / 5,
  encoder: webpEncoder,
  // libwebp's instance (a few rows of state for a lossy file, the whole ARGB image for a lossless
  // one) and in JavaScript a band of canvas width for an animation's frame and one for a crop.
  decodeCost: ({ stream }, { stored }) => {
    const bytes = webpDecoderWasmBytes({ ...stream, ...stored }) + 2 * WEBP_BAND_ROWS * stored.width * 4;
    return { open: bytes, streaming: bytes };
  },
  // libwebp collects the whole picture as YUV 4:2:0 while rows arrive; once they have, it encodes:
  // its work and its bit writers with room for the VP8 data the result may have, then writes the
  // whole file into the result's sink in one call.
  encodeCost: (facts) => {
    const { output, alpha, quality, lowMemory, maxResultBytes } = facts;
    return {
      streaming: webpEncoderImportWasmBytes(output.width, output.height, alpha),
      finishing: webpEncoderWasmBytes(output.width, output.height, alpha, quality, lowMemory, maxResultBytes),
      burstBytes: webpResultBound(facts),
    };
  },
  resultBound: (facts) => webpResultBound(facts),
  // Our encoder's files are lossy, with an ALPH chunk where the rows carry alpha.
  resultDecodeCost: (facts) => {
    const { width, height } = facts.output;
    return webpDecoderWasmBytes({ width, height, alpha: facts.alpha, lossless: false, inputBytes: webpResultBound(facts) }) + 2 * WEBP_BAND_ROWS * width * 4;
  },
});

function webpResultBound({ output, alpha, quality, maxResultBytes = Infinity }: EncodeFacts): number {
  return Math.min(webpResultBytes(output.width * output.height, alpha), webpEncodedBytesMax(output.width, output.height, alpha, quality), maxResultBytes);
}
