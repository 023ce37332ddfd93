import { startsWith } from '../../bytes';
import { defineFormat, type EncodeFacts } from '../format';
import { openWebpDecode } from './decode';
import { webpEncoder } from './encode';
import { readWebpHeader, verifyFirstFrame } from './header';
import { WEBP_BAND_ROWS, webpDecoderWasmBytes, webpEncodedBytesMax, webpEncoderWasmBytes, webpResultBytes } from './memory';
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
  shrinkFactors: [1],
  maxDimension: 16_383,
  supportsAlpha: true,
  resultMayBeCapped: false,
  encoder: webpEncoder,
  // libwebp's instance (a few rows of state for a lossy file, the whole ARGB image for a lossless
  // one) and in JavaScript a band of canvas width for an animation's frame and one for a crop.
  decodeCost: ({ stream }, { stored }) => {
    const bytes = webpDecoderWasmBytes({ ...stream, ...stored }) + 2 * WEBP_BAND_ROWS * stored.width * 4;
    return { open: bytes, streaming: bytes };
  },
  // libwebp holds the whole picture as YUV 4:2:0 and its work, and writes the file in one call at the end.
  encodeCost: (facts) => ({
    streaming: webpEncoderWasmBytes(facts.output.width, facts.output.height, facts.alpha, facts.quality, facts.lowMemory),
    burstBytes: webpResultBound(facts),
  }),
  resultBound: (facts) => webpResultBound(facts),
});

function webpResultBound({ output, alpha, quality }: EncodeFacts): number {
  return Math.min(webpResultBytes(output.width * output.height), webpEncodedBytesMax(output.width, output.height, alpha, quality));
}
