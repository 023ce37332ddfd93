import { BandWriter, CHECKPOINT_SIZE } from './band-writer';
import { EntropyError, READER_STATE_SIZE } from './bit-reader';
import { BlockReader } from './block-reader';
import { readJpegHeader, type JpegHeader } from './header';
import type { DecodeTable } from './huffman';
import { firstMcuOfImcuRow, scanDecodeTables, scanLayout, type ScanLayout } from './scan';

export interface JpegBand {
  /** First image row (stored orientation, before EXIF) that this band delivers, and how many. */
  y: number;
  rows: number;
  /** Rows at the top of this band's decoded image to discard (context MCU row above, for chroma upsampling). */
  skipRows: number;
  /**
   * Builds the standalone JPEG for this band on demand (so only one band's bytes need be alive,
   * and bands a crop doesn't need are never built). Its decode has skipRows + rows rows, plus
   * possibly a context MCU row below that the caller ignores.
   */
  jpeg(): Uint8Array;
}

export interface JpegBandPlan {
  width: number;
  height: number;
  bands: JpegBand[];
}

const EOI = 0xd9;

/**
 * Largest absolute DC value banded. A band codes its first DC value of each component as a
 * difference from 0, and, where restart markers are dropped, the difference between values either
 * side of one: both must fit category 15 (T.81 F.1.2.1.1). Sound 8-bit data stays within ±1024.
 */
const MAX_DC = 16383;

/**
 * Splits a JPEG into horizontal bands that decode, each on its own, to exactly the rows of the
 * whole image's decode (libjpeg / mozjpeg), so a large photo can be decoded a band at a time.
 *
 * The scan is Huffman-decoded once (symbols only: no DCT, no pixels) to check it and note where
 * each iMCU row starts. A band is a range of iMCU rows, with one more above and below when
 * chroma is vertically subsampled: libjpeg's "fancy" upsampling (jdsample.c h2v2, h1v2) blends
 * each chroma row with its neighbour, so a band's edge rows need the neighbouring chroma rows.
 * Bands hold about `maxBandPixels` pixels each, context rows included, and at least one iMCU row
 * of their own; when the whole image fits, the one band's JPEG is the file itself.
 *
 * null when the file can't be banded: anything but a single interleaved Huffman scan (baseline
 * SOF0 or extended-sequential SOF1, 8-bit precision) with 1 or 3 components; progressive,
 * arithmetic, lossless, 12-bit, multiple scans, DNL/zero height, 4 components; or any anomaly in
 * the entropy data (bad Huffman code, data running out, unexpected marker). The caller then
 * decodes the file whole, so null is always safe. Never throws; memory stays within a small
 * multiple of the file's size.
 */
export function planJpegBands(bytes: Uint8Array, maxBandPixels: number): JpegBandPlan | null {
  const header = readJpegHeader(bytes);
  const layout = header && scanLayout(header);
  const tables = header && scanDecodeTables(header);
  if (!header || !layout || !tables) return null;
  let checkpoints: Float64Array;
  try {
    checkpoints = readCheckpoints(bytes, header, layout, tables.dc, tables.ac);
  } catch (error) {
    if (error instanceof EntropyError) return null;
    throw error;
  }
  const { width, height } = header;
  const { imcuRows, imcuHeight } = layout;
  const context = layout.verticallySubsampled ? 1 : 0;
  const rowsPerBand = Math.floor(maxBandPixels / (width * imcuHeight));
  const ownRows = rowsPerBand > 2 * context ? rowsPerBand - 2 * context : 1;
  const count = width * height <= maxBandPixels ? 1 : Math.ceil(imcuRows / ownRows);
  if (count === 1) return { width, height, bands: [{ y: 0, rows: height, skipRows: 0, jpeg: () => bytes }] };

  const writer = new BandWriter(bytes, header, layout, tables, checkpoints);
  const bands: JpegBand[] = [];
  for (let i = 0; i < count; i++) {
    // Even shares of the iMCU rows, so no band is much smaller than the others.
    const first = Math.floor((i * imcuRows) / count);
    const end = Math.floor(((i + 1) * imcuRows) / count);
    const from = Math.max(0, first - context);
    const to = Math.min(imcuRows, end + context);
    const y = first * imcuHeight;
    bands.push({
      y,
      rows: Math.min(end * imcuHeight, height) - y,
      skipRows: (first - from) * imcuHeight,
      jpeg: () => writer.band(from, to),
    });
  }
  return { width, height, bands };
}

/**
 * Reads the whole scan, checking it as libjpeg would read it, and returns the reader state and DC
 * predictors at the start of every iMCU row, and at the end (row `imcuRows`). Restart markers
 * (T.81 F.1.2.3, F.2.2.5) reset the predictors and must come in order, where the interval says.
 */
function readCheckpoints(bytes: Uint8Array, header: JpegHeader, layout: ScanLayout, dc: DecodeTable[], ac: DecodeTable[]): Float64Array {
  const reader = new BlockReader(bytes, header.dataStart);
  const { blockComponents, imcuRows } = layout;
  const interval = header.restartInterval;
  const predictors = new Int32Array(3);
  const total = firstMcuOfImcuRow(layout, imcuRows);
  // Grown as rows are reached, which takes data: a header promising many rows costs nothing.
  let checkpoints = new Float64Array(Math.min(imcuRows + 1, 64) * CHECKPOINT_SIZE);
  let row = 0;
  let rowStart = 0;
  for (let mcu = 0; ; mcu++) {
    if (interval !== 0 && mcu % interval === 0 && mcu !== 0 && mcu < total) {
      reader.restart((mcu / interval - 1) & 7);
      predictors.fill(0);
    }
    if (mcu === rowStart) {
      if ((row + 1) * CHECKPOINT_SIZE > checkpoints.length) {
        const grown = new Float64Array(Math.min(imcuRows + 1, 2 * (row + 1)) * CHECKPOINT_SIZE);
        grown.set(checkpoints);
        checkpoints = grown;
      }
      const at = row * CHECKPOINT_SIZE;
      reader.save(checkpoints, at);
      checkpoints.set(predictors, at + READER_STATE_SIZE);
      row++;
      rowStart = firstMcuOfImcuRow(layout, row);
    }
    if (mcu === total) break;
    for (let b = 0; b < blockComponents.length; b++) {
      const c = blockComponents[b];
      const value = predictors[c] + reader.dc(dc[c]);
      if (value > MAX_DC || value < -MAX_DC) throw new EntropyError(`DC value ${value}`);
      predictors[c] = value;
      reader.skipAc(ac[c]);
    }
    if (reader.overran) throw new EntropyError('the data ends before the last MCU');
  }
  const marker = reader.markerAfterData();
  if (marker < 0 || bytes[marker + 1] !== EOI) throw new EntropyError('no EOI after the scan');
  return checkpoints;
}
