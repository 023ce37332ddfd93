import { startsWith } from '../../bytes';
import { defineFormat, type EncodeFacts } from '../format';
import { AVIF_BAND_ROWS, openAvif } from './decode';
import { avifEncoder } from './encode';
import { readAvifHeader } from './header';
import { CALLS_SUSPEND } from '../../codecs/codec';
import { avifDecodeMemory, avifEncodedBytes, avifEncoderPeakBytes, avifResultDecodeBytes, avifWriteBurstBytes, DAV1D_BASE_BYTES, windowable, windowAlwaysSuffices } from './memory';
import { stripAvif } from './strip';
import { verifyAv1Sizes } from './verify';

export const avif = defineFormat({
  name: 'avif',
  aliases: [],
  extension: 'avif',
  mimeType: 'image/avif',
  label: 'AVIF',
  sniff: isAvifFile,
  readHeader: readAvifHeader,
  // The checks a decode would make, for the lossless strip too (it must not report what cannot be decoded).
  verify: (_bytes, header) => verifyAv1Sizes(header),
  strip: stripAvif,
  decode: (bytes, header, options) => openAvif(bytes, header, options),
  // The window's rows are handed over at dav1d's yield points, which only suspend through JSPI.
  decodesInWindow: ({ container }) => CALLS_SUSPEND && windowable(container),
  windowAlwaysSuffices: ({ container }) => CALLS_SUSPEND && windowAlwaysSuffices(container),
  // Frames and tiles yield on their own (dav1d.ts, encode.ts); bands are converted from YUV or gathered into tiles.
  work: { decode: 15, encode: 2 },
  cost: { decode: 50, encode: 160, encoderMs: 12 },
  shrinkFactors: [1],
  maxDimension: 65_536,
  supportsAlpha: true,
  // Bounded by white noise (0.6-1.9 bytes a pixel); photos give 0.05-0.16, so a fifth of it is room enough.
  resultMayBeCapped: true,
  resultCapFloor: 1 / 5,
  encoder: avifEncoder,
  // dav1d holds a decoded picture (one row of tiles of a grid) and the item's data; rows are converted band by band.
  decodeCost: ({ container }, { stored, decoded, decode }) => {
    const { wasmBytes, jsBytes } = avifDecodeMemory(container, decoded.width, AVIF_BAND_ROWS, decode.rowWindow);
    // The memory guard asks about other sizes of the same image too (the largest that fits).
    const scale = (stored.width * stored.height) / (container.size.width * container.size.height);
    const bytes = DAV1D_BASE_BYTES + (wasmBytes + jsBytes - DAV1D_BASE_BYTES) * scale;
    return { open: bytes, streaming: bytes };
  },
  // The encoded tiles are kept until the end, where the container is written around them tile by tile.
  encodeCost: (facts) => ({
    streaming: avifEncoderPeakBytes(facts.output.width, facts.output.height, facts.alpha, facts.quality, avifResultBound(facts)),
    burstBytes: avifWriteBurstBytes(facts.output.width, facts.output.height, facts.alpha, facts.quality),
  }),
  resultBound: (facts) => avifResultBound(facts),
  // A region of a grid decodes the columns of tiles it covers (layer-rows.ts).
  decodesRegionsApart: true,
  resultDecodeCost: ({ output, alpha, quality }) => avifResultDecodeBytes(output.width, output.height, alpha, quality, AVIF_BAND_ROWS),
});

/** The file's bound at its quality, or the plan's cap where that is less (the tile encoder keeps to it). */
function avifResultBound({ output, alpha, quality, maxResultBytes = Infinity }: EncodeFacts): number {
  return Math.min(avifEncodedBytes(output.width, output.height, alpha, quality), maxResultBytes);
}

/**
 * An ISOBMFF file whose leading `ftyp` box names `avif` (still) or `avis` (sequence) as major
 * or compatible brand. HEIC (`heic`, `mif1` alone) is not AVIF.
 */
export function isAvifFile(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || !startsWith(bytes, 4, 'ftyp')) return false;
  const boxSize = ((bytes[0] << 24) >>> 0) + ((bytes[1] << 16) | (bytes[2] << 8) | bytes[3]);
  if (boxSize < 16) return false; // size 0/1 (to end / 64-bit) are not used for ftyp in practice
  const end = Math.min(boxSize, bytes.length);
  const isAvifBrand = (at: number) => startsWith(bytes, at, 'avif') || startsWith(bytes, at, 'avis');
  if (isAvifBrand(8)) return true; // major brand; 12..16 is the minor version
  for (let at = 16; at + 4 <= end; at += 4) {
    if (isAvifBrand(at)) return true;
  }
  return false;
}
