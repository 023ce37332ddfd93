import { startsWith } from '../../bytes';
import { BAND_ROWS_MAX } from '../../stages/rows';
import { defineFormat } from '../format';
import { openJpegDecode, JPEG_SHRINK_FACTORS } from './decode';
import { jpegEncoder } from './encode';
import { readJpegHeader, verifyJpegStructure } from './header';
import { jpegDecodeWasmBytes, jpegEncodeWasmBytes, jpegEncoderPlaces, jpegFinishBurstBytes, jpegResultBytes, packedValuesBound } from './memory';
import { stripJpeg } from './strip';

export const jpeg = defineFormat({
  name: 'jpg',
  aliases: ['jpeg'],
  extension: 'jpg',
  mimeType: 'image/jpeg',
  label: 'JPEG',
  sniff: (bytes) => startsWith(bytes, 0, [0xff, 0xd8, 0xff]),
  readHeader: readJpegHeader,
  verify: verifyJpegStructure,
  strip: stripJpeg,
  decode: (bytes, header, options) => openJpegDecode(bytes, header.frame, options),
  // Without the optimised tables' pass, which yields on its own (libjpeg.ts).
  work: { decode: 12, encode: 20 },
  cost: { decode: 4, encode: 7, encoderMs: 1 },
  shrinkFactors: JPEG_SHRINK_FACTORS,
  maxDimension: 65_535,
  supportsAlpha: false,
  trialScoresResultTiles: true,
  resultMayBeCapped: false,
  packsEncoderBuffer: true,
  encoder: jpegEncoder,
  // Bands hand out views into the instance's memory: baseline files 1 MiB whatever their size,
  // files with several scans 2 bytes a sample for the coefficients (3 a pixel for 4:2:0), or in
  // the low-memory mode those packed (at most a bound from the frame and the file's size).
  lowMemoryDecodeBytes: (bytes, { frame }) => packedValuesBound(frame, bytes.byteLength),
  decodeCost: ({ frame }, { stored, decode }) => {
    const streaming = jpegDecodeWasmBytes({ ...frame, ...stored }, decode.shrink, decode.lowMemory?.maxBytes);
    return { open: streaming, streaming };
  },
  // Optimised Huffman tables (sharp's bytes exactly) need the coefficients of the whole image,
  // 3 bytes a pixel, and write the file at the end, drained as it comes; the low-memory mode writes
  // libjpeg's standard tables from about 1 MiB, a band's worth of file at a time.
  // An orientation the encoder places (3-8) holds the result's YCbCr planes and writes the whole
  // file at the end, drained as it comes, whatever the tables.
  encodeCost: ({ output, quality, grey, lowMemory, packedBytes, orientation }) => ({
    streaming: jpegEncodeWasmBytes(output.width, output.height, grey ? 1 : 3, !lowMemory, packedBytes, orientation),
    burstBytes:
      lowMemory && !jpegEncoderPlaces(orientation)
        ? jpegResultBytes(output.width * BAND_ROWS_MAX, quality)
        : jpegFinishBurstBytes(output.width, output.height, quality, grey),
  }),
  resultBound: ({ output, quality }) => jpegResultBytes(output.width * output.height, quality),
  // Our encoder's files are baseline, 4:2:0 or grey: the decoder holds its band, no coefficients.
  resultDecodeCost: ({ output, grey }) =>
    jpegDecodeWasmBytes({ ...output, components: grey ? 1 : 3, sampling: grey ? [{ h: 1, v: 1 }] : [{ h: 2, v: 2 }, { h: 1, v: 1 }, { h: 1, v: 1 }], progressive: false, multiScan: false, adobeTransform: null }, 1),
});
