import { startsWith } from '../../bytes';
import { defineFormat, type EncodeFacts } from '../format';
import { openPng } from './decode';
import { pngEncoder, pngFileBound } from './encode';
import { PNG_SIGNATURE, readPngHeader, verifyPngChunks } from './header';
import { PNG_BURST_BYTES, pngDecodeBytes, pngEncodeBytes, pngOutputChannels } from './memory';
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
  work: { decode: 65, encode: 175 },
  shrinkFactors: [1],
  maxDimension: 2 ** 31 - 1,
  supportsAlpha: true,
  resultMayBeCapped: true,
  encoder: pngEncoder,
  // Rows in JavaScript and the runtime's inflaters (one per Adam7 pass), whatever the size.
  decodeCost: (header, { stored, decode }) => {
    const bytes = pngDecodeBytes({ ...header, ...stored }, decode.region?.width ?? stored.width);
    return { open: bytes, streaming: bytes };
  },
  // Rows and the runtime's deflate; the file (as large as the filtered rows at worst) goes out as
  // the deflater gives it, a batch and what the stream kept back at a time.
  encodeCost: (facts) => ({
    streaming: pngEncodeBytes(facts.output.width, facts.output.height, pngOutputChannels(facts.alpha, facts.grey)),
    burstBytes: Math.min(pngResultBound(facts), PNG_BURST_BYTES),
  }),
  resultBound: (facts) => pngResultBound(facts),
});

function pngResultBound({ output, alpha, grey, maxResultBytes = Infinity }: EncodeFacts): number {
  return Math.min(pngFileBound(output.width, output.height, pngOutputChannels(alpha, grey)), maxResultBytes);
}
