import { startsWith } from '../../bytes';
import { defineFormat, type EncodeFacts } from '../format';
import { openPng } from './decode';
import { pngEncoder, pngFileBound } from './encode';
import { PNG_SIGNATURE, readPngHeader, verifyPngChunks } from './header';
import { pngDecodeBytes, pngEncodeBytes, pngOutputChannels, pngWriteBurstBytes } from './memory';
import { stripPng } from './strip';

export const png = defineFormat({
  name: 'png',
  aliases: [],
  extension: 'png',
  mimeType: 'image/png',
  label: 'PNG',
  sniff: (bytes) => startsWith(bytes, 0, PNG_SIGNATURE),
  readHeader: readPngHeader,
  verify: verifyPngChunks,
  strip: stripPng,
  decode: openPng,
  work: { decode: 20, encode: 55 },
  cost: { decode: 9, encode: 45, encoderMs: 1 },
  shrinkFactors: [1],
  maxDimension: 2 ** 31 - 1,
  supportsAlpha: true,
  resultMayBeCapped: true,
  encoder: pngEncoder,
  // The codec's WebAssembly memory: the band, and an inflate stream, a batch of rows and a row per Adam7 pass.
  decodeCost: (header, { stored, decode }) => {
    const bytes = pngDecodeBytes({ ...header, ...stored }, decode.region?.width ?? stored.width);
    return { open: bytes, streaming: bytes };
  },
  // The codec's WebAssembly memory (deflate, rows, a band); the file goes out as deflate gives it,
  // a band's worth at a time.
  encodeCost: (facts) => {
    const channels = pngOutputChannels(facts.alpha, facts.grey);
    return {
      streaming: pngEncodeBytes(facts.output.width, facts.output.height, channels),
      burstBytes: Math.min(pngResultBound(facts), pngWriteBurstBytes(facts.output.width, channels)),
    };
  },
  resultBound: (facts) => pngResultBound(facts),
});

function pngResultBound({ output, alpha, grey, maxResultBytes = Infinity }: EncodeFacts): number {
  return Math.min(pngFileBound(output.width, output.height, pngOutputChannels(alpha, grey)), maxResultBytes);
}
