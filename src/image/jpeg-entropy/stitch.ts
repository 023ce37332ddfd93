import { concat } from '../bytes';
import { BitWriter, category } from './bit-writer';
import { BlockReader, recoding, type Recoding } from './block-reader';
import { MAX_DIMENSION, readJpegHeader, type JpegHeader } from './header';
import { AC, DC, dhtSegment, encodeTable, optimalSpec, type DecodeTable, type EncodeTable } from './huffman';
import { firstMcuOfImcuRow, scanDecodeTables, scanLayout, type ScanLayout } from './scan';

const DHT = 0xc4;
const SOS = 0xda;
const EOI = 0xd9;

interface Band {
  bytes: Uint8Array;
  header: JpegHeader;
  layout: ScanLayout;
  dc: DecodeTable[];
  ac: DecodeTable[];
  /** From this band's AC codes to the new ones, by scan component (for the second pass). */
  recodings: Recoding[];
}

/**
 * One baseline JPEG from JPEGs that mozjpeg encoded from consecutive horizontal bands of one image
 * with identical settings (same width, sampling and quantisation tables; every band but the last a
 * multiple of the MCU height). The scans are joined symbol by symbol: DC differences continue
 * across the seams, and the Huffman tables are rebuilt optimal for the whole image (libjpeg's
 * jpeg_gen_optimal_table), so the file is the size of a whole-image encode with optimize_coding.
 * Its coefficients are the bands' coefficients, so it decodes to the bands' pixels stacked; but
 * where chroma is subsampled vertically (4:2:0), the row either side of a seam differs a little:
 * libjpeg's upsampling now blends the chroma rows across the seam, as in any whole image, where
 * each band on its own repeated its edge row.
 *
 * Two passes over the bands' scans: one counts the symbols, one writes them in the new codes.
 * Throws on input it did not expect (these are our own encoder's outputs).
 */
export function stitchJpegBands(bands: Uint8Array[]): Uint8Array {
  if (bands.length === 0) throw new Error('stitchJpegBands: no bands');
  const parsed = bands.map(readBand);
  const first = parsed[0].header;
  let height = 0;
  parsed.forEach((band, i) => {
    if (!sameSettings(first, band.header)) throw new Error(`stitchJpegBands: band ${i} was encoded with other settings than band 0`);
    if (i < parsed.length - 1 && band.header.height % band.layout.imcuHeight !== 0) {
      throw new Error(`stitchJpegBands: band ${i} is ${band.header.height} rows, not a multiple of the ${band.layout.imcuHeight}-row MCU`);
    }
    height += band.header.height;
  });
  if (height > MAX_DIMENSION) throw new Error(`stitchJpegBands: ${height} rows, more than libjpeg decodes`);

  const { scan } = first;
  const frequencies = [0, 1, 2, 3].map(() => [new Int32Array(257), new Int32Array(257)]);
  const dcFrequencies = scan.map((s) => frequencies[s.dcTable][DC]);
  const acFrequencies = scan.map((s) => frequencies[s.acTable][AC]);
  forEachBlock(parsed, (reader, band, c, diff) => {
    dcFrequencies[c][category(diff)]++;
    reader.countAc(band.ac[c], acFrequencies[c]);
  });

  // In libjpeg's order (each scan component's DC table, then its AC table), as mozjpeg writes them.
  const tables: { tableClass: number; id: number; codes: EncodeTable; spec: ReturnType<typeof optimalSpec> }[] = [];
  for (const [tableClass, id] of scan.flatMap((s) => [[DC, s.dcTable], [AC, s.acTable]])) {
    if (tables.some((t) => t.tableClass === tableClass && t.id === id)) continue;
    const spec = optimalSpec(frequencies[id][tableClass]);
    const codes = encodeTable(spec, tableClass);
    if (!codes) throw new Error('stitchJpegBands: DC differences beyond category 15');
    tables.push({ tableClass, id, spec, codes });
  }
  const codesOf = (tableClass: number, id: number) => tables.find((t) => t.tableClass === tableClass && t.id === id)!.codes;
  const dcCodes = scan.map((s) => codesOf(DC, s.dcTable));
  const acCodes = scan.map((s) => codesOf(AC, s.acTable));
  for (const band of parsed) band.recodings = band.ac.map((table, c) => recoding(table, acCodes[c]));

  const writer = new BitWriter(bands.reduce((sum, b) => sum + b.length, 0) + 4096);
  writer.append(headerWithHeight(bands[0], first, height));
  writer.append(dhtSegment(tables));
  const sos = first.segments.find((s) => s.marker === SOS)!;
  writer.append(bands[0].subarray(sos.start, sos.end));
  forEachBlock(parsed, (reader, band, c, diff) => {
    writer.writeDc(dcCodes[c], diff);
    reader.recodeAc(band.ac[c], band.recodings[c], acCodes[c], writer);
  });
  writer.padToByte();
  writer.append(Uint8Array.of(0xff, EOI));
  return writer.finish();
}

function readBand(bytes: Uint8Array, i: number): Band {
  const header = readJpegHeader(bytes);
  const layout = header && scanLayout(header);
  const tables = header && scanDecodeTables(header);
  if (!header || !layout || !tables) throw new Error(`stitchJpegBands: band ${i} is not a single-scan sequential JPEG`);
  if (header.restartInterval !== 0) throw new Error(`stitchJpegBands: band ${i} has restart markers`);
  return { bytes, header, layout, ...tables, recodings: [] };
}

/** Same frame (but for its height), quantisation tables and scan layout. */
function sameSettings(a: JpegHeader, b: JpegHeader): boolean {
  const sameBytes = (x: Uint8Array | undefined, y: Uint8Array | undefined) => x === y || (!!x && !!y && x.length === y.length && x.every((v, i) => v === y[i]));
  return (
    a.sofMarker === b.sofMarker &&
    a.width === b.width &&
    JSON.stringify(a.components) === JSON.stringify(b.components) &&
    JSON.stringify(a.scan) === JSON.stringify(b.scan) &&
    a.components.every((c) => sameBytes(a.quant[c.quantTable], b.quant[c.quantTable]))
  );
}

/**
 * Calls `visit` for every block of every band in order, with the reader at the block's AC
 * coefficients and the block's DC difference from the previous block of its component in the
 * whole image (T.81 F.1.2.1), which `visit` must then read past.
 */
function forEachBlock(bands: Band[], visit: (reader: BlockReader, band: Band, component: number, diff: number) => void): void {
  const predictors = new Int32Array(3);
  bands.forEach((band, i) => {
    const reader = new BlockReader(band.bytes, band.header.dataStart);
    const { blockComponents } = band.layout;
    const bandPredictors = new Int32Array(3);
    const total = firstMcuOfImcuRow(band.layout, band.layout.imcuRows);
    for (let mcu = 0; mcu < total; mcu++) {
      for (let b = 0; b < blockComponents.length; b++) {
        const c = blockComponents[b];
        const value = bandPredictors[c] + reader.dc(band.dc[c]);
        bandPredictors[c] = value;
        visit(reader, band, c, value - predictors[c]);
        predictors[c] = value;
      }
      if (reader.overran) throw new Error(`stitchJpegBands: band ${i}'s scan data ends early`);
    }
    const marker = reader.markerAfterData();
    if (marker < 0 || band.bytes[marker + 1] !== EOI) throw new Error(`stitchJpegBands: band ${i} has more after its scan`);
  });
}

/** Band 0's segments before the scan but its Huffman tables, with the whole image's height. */
function headerWithHeight(bytes: Uint8Array, header: JpegHeader, height: number): Uint8Array {
  const kept = header.segments.filter((s) => s.marker !== DHT && s.marker !== SOS);
  const head = concat([Uint8Array.of(0xff, 0xd8), ...kept.map((s) => bytes.subarray(s.start, s.end))]);
  const sof = header.segments.find((s) => s.marker === header.sofMarker)!;
  let at = 2;
  for (const s of kept) {
    if (s === sof) break;
    at += s.end - s.start;
  }
  const heightAt = at + (header.heightOffset - sof.start);
  head[heightAt] = height >> 8;
  head[heightAt + 1] = height & 0xff;
  return head;
}
