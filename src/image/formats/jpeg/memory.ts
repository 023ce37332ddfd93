import { CALLS_SUSPEND } from '../../codecs/codec';
import type { JpegFrame } from './header';

/**
 * What the libjpeg-turbo codec (libjpeg.ts) costs in WebAssembly memory, from the frame header
 * alone, as upper bounds: libjpeg's own buffers follow its allocation code (jdmainct.c, jdsample.c,
 * jdcoefct.c, jcprepct.c, jcmainct.c, jccoefct.c); the fixed parts were measured. The decoder gives
 * libjpeg exactly decoderLibjpegBytes as its memory limit (encoderLibjpegBytes for the encoder), so
 * a file cannot make it take more.
 */

/** Rows per band handed out by the decoder and fed to the encoder (the largest iMCU row is 32). */
export const JPEG_BAND_ROWS = 16;

/**
 * The decoder's work limits. Encoders write a few scans to a few dozen: libjpeg's progressive
 * script (cjpeg, sharp) writes 10 for YCbCr and 6 for grey, which decode each 8x8 block 5.3 times
 * (4:2:0: the scans' blocks over the image's). A hostile file repeats a scan at a few bytes each
 * (a full-precision AC scan may repeat without any warning): 10,000 luma scans of a flat
 * 2000x2000 image would take ~20 s here (2 ms each); refused after 100 scans or 24 passes, the
 * decode ends within ~100 ms (libjpeg-damage.test.ts).
 */
export const JPEG_MAX_SCANS = 100;
export const JPEG_MAX_BLOCK_PASSES = 24;

const DCT_SIZE = 8;
const BLOCK_BYTES = 64 * 2;
/** libjpeg-turbo's jmemmgr rounds every sample row to 32 bytes (ALIGN_SIZE) and keeps a pointer to it. */
const ROW_OVERHEAD = 32 + 4;
/**
 * libjpeg's allocations that do not grow with the image: tables, state, pool slop. Measured 19-24 KB
 * (decoder) and 20-29 KB (encoder); the margin is for files with more tables than ours.
 */
const LIBJPEG_DECODER_FIXED = 48 * 1024;
const LIBJPEG_ENCODER_FIXED = 48 * 1024;
/**
 * The module's static data and stack below the heap (about 400 KB), rounded up: the wasm figures
 * below exceed the measured memory by at most 256 KiB (libjpeg-memory.test.ts checks they cover it).
 */
const WASM_HEAP_BASE = 512 * 1024;
const WASM_INITIAL = 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** The C side's own buffers besides the band: the input chunk (16 KB) or output chunk (32 KB), structs, malloc headers. */
const C_SIDE_FIXED = 64 * 1024;

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);
const roundUp = (a: number, b: number) => ceilDiv(a, b) * b;

interface Component {
  h: number;
  v: number;
  widthInBlocks: number;
  heightInBlocks: number;
  /** IDCT output size of one block at this scale (jdmaster.c: chroma is scaled up by the IDCT where it can). */
  scaledSize: number;
}

function componentLayout(width: number, height: number, sampling: JpegFrame['sampling'], shrink: number): Component[] {
  const maxH = Math.max(...sampling.map((s) => s.h));
  const maxV = Math.max(...sampling.map((s) => s.v));
  const minScaled = DCT_SIZE / shrink;
  return sampling.map(({ h, v }) => {
    let scaledSize = minScaled;
    while (scaledSize < DCT_SIZE && (maxH * minScaled) % (h * scaledSize * 2) === 0 && (maxV * minScaled) % (v * scaledSize * 2) === 0) scaledSize *= 2;
    return { h, v, widthInBlocks: ceilDiv(width * h, maxH * DCT_SIZE), heightInBlocks: ceilDiv(height * v, maxV * DCT_SIZE), scaledSize };
  });
}

function sampleRows(rows: number, samplesPerRow: number): number {
  return rows * (roundUp(samplesPerRow, 32) + ROW_OVERHEAD);
}

/** libjpeg's whole-image coefficient buffer: every block of every component, 128 bytes each. */
function coefficientBytes(parts: Component[]): number {
  // jmemmgr.c also keeps a pointer to every row of blocks (a tall, narrow image's rows add up).
  return parts.reduce((sum, c) => sum + roundUp(c.heightInBlocks, c.v) * (roundUp(c.widthInBlocks, c.h) * BLOCK_BYTES + BLOCK_ROW_POINTER_BYTES), 0);
}

/** A row pointer (4 bytes on wasm32) and its share of the pool's slop. */
const BLOCK_ROW_POINTER_BYTES = 8;

/** What codecs/jpeg/memory.c keeps unpacked of a packed coefficient buffer (STRIP_BYTES), at least 5 iMCU rows of each component. */
const STRIP_BYTES = 4 * 2 ** 20;
/** Per block of a packed buffer: the mask of its non-zero coefficients and its DC value. */
const PACKED_BLOCK_BYTES = 8 + 2;
/** Per row of a packed buffer: its pointer, its size and malloc's header. */
const PACKED_ROW_BYTES = 4 + 4 + 16;

/**
 * The most the packed values of `frame` in a file of `inputBytes` can take: 2 bytes for every
 * non-zero AC coefficient, of which there are at most half as many as the file has bits (a scan
 * codes each one it makes non-zero with a Huffman code and at least one more bit), and at most 63
 * a block (what a noisy file at high quality comes near). Photos take about a third of it.
 */
export function packedValuesBound(frame: JpegFrame, inputBytes: number): number {
  const parts = componentLayout(frame.width, frame.height, frame.sampling, 1);
  const blocks = parts.reduce((sum, c) => sum + roundUp(c.widthInBlocks, c.h) * roundUp(c.heightInBlocks, c.v), 0);
  return Math.min(2 * 4 * inputBytes, 2 * 63 * blocks);
}

/**
 * The packed coefficient buffer (codecs/jpeg/memory.c) with at most `valueBytes` of AC values
 * (packedValuesBound, or less where the plan gives less): the strip, each block's mask and DC,
 * the values, the row table and a row packed (8 + 128 bytes a block).
 */
function packedCoefficientBytes(parts: Component[], valueBytes: number): number {
  let blocks = 0;
  let rows = 0;
  let strip = 0;
  let widestRow = 0;
  for (const c of parts) {
    const blocksPerRow = roundUp(c.widthInBlocks, c.h);
    const rowCount = roundUp(c.heightInBlocks, c.v);
    blocks += blocksPerRow * rowCount;
    rows += rowCount;
    strip += 5 * c.v * blocksPerRow * BLOCK_BYTES;
    widestRow = Math.max(widestRow, blocksPerRow);
  }
  // jmemmgr.c fits whole multiples of the rows each array needs at once (5 iMCU rows for a
  // progressive file, 1 otherwise) into the strip, at least one.
  return Math.max(STRIP_BYTES, strip) + blocks * PACKED_BLOCK_BYTES + valueBytes + rows * PACKED_ROW_BYTES + widestRow * (8 + BLOCK_BYTES);
}

/**
 * Bytes libjpeg allocates to decode `frame` at 1/shrink: the main buffer (an iMCU row of each
 * component plus two row groups of context for fancy upsampling), the upsampler's rows and, for a
 * progressive or multi-scan file, the whole-image coefficient buffer (2 bytes a sample: 3 bytes a
 * pixel for 4:2:0, 6 for 4:4:4), or in the decoder's low-memory mode the buffer packed with at
 * most `packedValueBytes` of values. Cropping does not change it.
 */
export function decoderLibjpegBytes(frame: JpegFrame, shrink: number, packedValueBytes?: number): number {
  const parts = componentLayout(frame.width, frame.height, frame.sampling, shrink);
  const minScaled = DCT_SIZE / shrink;
  const maxH = Math.max(...frame.sampling.map((s) => s.h));
  const maxV = Math.max(...frame.sampling.map((s) => s.v));
  const outputWidth = ceilDiv(frame.width, shrink);
  let bytes = LIBJPEG_DECODER_FIXED;
  for (const c of parts) {
    const rowGroup = (c.v * c.scaledSize) / minScaled;
    bytes += sampleRows(rowGroup * (minScaled + 2), c.widthInBlocks * c.scaledSize);
    bytes += sampleRows(maxV, roundUp(outputWidth, maxH));
  }
  if (frame.multiScan) bytes += packedValueBytes === undefined ? coefficientBytes(parts) : packedCoefficientBytes(parts, packedValueBytes);
  return bytes;
}

/**
 * Bytes libjpeg allocates to encode: the colour-converted rows, an iMCU row per component and, with
 * optimised Huffman tables, the coefficient buffer, or that buffer packed with at most
 * `packedValueBytes` of values (written once and read back once: no space freed between rows).
 */
export function encoderLibjpegBytes(width: number, height: number, components: 1 | 3, optimizeHuffman: boolean, packedValueBytes?: number): number {
  const sampling = components === 1 ? [{ h: 1, v: 1 }] : [{ h: 2, v: 2 }, { h: 1, v: 1 }, { h: 1, v: 1 }];
  const parts = componentLayout(width, height, sampling, 1);
  const maxH = Math.max(...sampling.map((s) => s.h));
  const maxV = Math.max(...sampling.map((s) => s.v));
  let bytes = LIBJPEG_ENCODER_FIXED;
  for (const c of parts) {
    bytes += sampleRows(maxV, (c.widthInBlocks * DCT_SIZE * maxH) / c.h);
    bytes += sampleRows(c.v * DCT_SIZE, c.widthInBlocks * DCT_SIZE);
  }
  if (optimizeHuffman) bytes += packedValueBytes === undefined ? coefficientBytes(parts) : packedCoefficientBytes(parts, packedValueBytes);
  return bytes;
}

function wasmBytes(heapBytes: number): number {
  return roundUp(Math.max(WASM_INITIAL, WASM_HEAP_BASE + heapBytes), WASM_PAGE);
}

/**
 * WebAssembly memory of a decode of `frame` at 1/shrink (any window of it): an upper bound. Packed
 * rows are reallocated as scans add to them, so the heap may hold freed space between them: an
 * eighth more is allowed for it.
 */
export function jpegDecodeWasmBytes(frame: JpegFrame, shrink: number, packedValueBytes?: number): number {
  const outputWidth = ceilDiv(frame.width, shrink);
  const bands = (JPEG_BAND_ROWS + 1) * outputWidth * 4; // the band and a row for trimming a window
  const libjpeg = decoderLibjpegBytes(frame, shrink, packedValueBytes);
  const fragmentation = packedValueBytes !== undefined && frame.multiScan ? libjpeg / 8 : 0;
  return wasmBytes(libjpeg + fragmentation + bands + C_SIDE_FIXED);
}

/**
 * WebAssembly memory of an encode of a `width` x `height` result: an upper bound. An orientation
 * that reverses or transposes the stored rows (3-8) is placed by the encoder (codecs/jpeg/encoder.c,
 * placed mode): it holds the result as YCbCr planes, 1.5 bytes a pixel (1 for grey), and its band
 * and pending row are stored rows (the result's height long for 5-8).
 */
export function jpegEncodeWasmBytes(width: number, height: number, components: 1 | 3, optimizeHuffman: boolean, packedValueBytes?: number, orientation = 1): number {
  const libjpeg = encoderLibjpegBytes(width, height, components, optimizeHuffman, packedValueBytes);
  if (!jpegEncoderPlaces(orientation)) return wasmBytes(libjpeg + JPEG_BAND_ROWS * width * 4 + C_SIDE_FIXED);
  const storedWidth = orientation >= 5 ? height : width;
  return wasmBytes(libjpeg + placedPlaneBytes(width, height, components) + (JPEG_BAND_ROWS + 1) * storedWidth * 4 + C_SIDE_FIXED);
}

/** Orientations the encoder places in its planes (2 mirrors each band as it comes: encode.ts). */
export const jpegEncoderPlaces = (orientation: number) => orientation >= 3;

/** The placed mode's planes: each component's blocks across, in whole iMCU rows (encoder_start_placed). */
function placedPlaneBytes(width: number, height: number, components: 1 | 3): number {
  const sampling = components === 1 ? [{ h: 1, v: 1 }] : [{ h: 2, v: 2 }, { h: 1, v: 1 }, { h: 1, v: 1 }];
  const maxV = Math.max(...sampling.map((s) => s.v));
  const imcuRows = ceilDiv(height, maxV * DCT_SIZE);
  return componentLayout(width, height, sampling, 1).reduce((sum, c) => sum + c.widthInBlocks * DCT_SIZE * imcuRows * c.v * DCT_SIZE, 0);
}

/**
 * Most bytes a file can have: white noise (the least compressible picture) measured at each
 * quality; photos come out several times smaller.
 */
export function jpegResultBytes(pixels: number, quality: number): number {
  return (quality <= 80 ? 0.8 : quality <= 90 ? 1.75 : 3) * pixels + 256 * 1024;
}

/** With optimised tables, the sink is drained each time this much more of the file has come out (encode.ts). */
export const JPEG_FINISH_DRAIN_BYTES = 2 ** 20;

/** Bytes codecs/jpeg/encoder.c hands JavaScript at a time (OUTPUT_CHUNK). */
const OUTPUT_CHUNK_BYTES = 32 * 1024;

/**
 * Most bytes the optimised tables' pass writes between two drains of the sink: the whole file comes
 * out in jpeg_finish_compress, a row of blocks (16 pixel rows; 8 for grey) between yield points, so
 * a drain comes after JPEG_FINISH_DRAIN_BYTES, a row of blocks and an output chunk more at most.
 * Where calls cannot suspend (no JSPI), nothing runs at the yield points: the whole file.
 */
export function jpegFinishBurstBytes(width: number, height: number, quality: number, grey: boolean): number {
  const wholeFile = jpegResultBytes(width * height, quality);
  if (!CALLS_SUSPEND) return wholeFile;
  return Math.min(wholeFile, JPEG_FINISH_DRAIN_BYTES + jpegResultBytes(width * (grey ? DCT_SIZE : 2 * DCT_SIZE), quality) + OUTPUT_CHUNK_BYTES);
}
