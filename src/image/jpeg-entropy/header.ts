import { AC, DC, type HuffmanSpec } from './huffman';

/**
 * The markers of a JPEG up to its first scan, for files this folder can transcode: one sequential
 * Huffman-coded scan (SOF0 or SOF1, 8-bit samples) holding every component. Anything else, and
 * anything libjpeg would refuse or only warn about, makes `readJpegHeader` return null.
 */

export interface FrameComponent {
  id: number;
  /** Sampling factors (T.81 A.1.1), 1..4. */
  h: number;
  v: number;
  quantTable: number;
}

export interface ScanComponent {
  /** Index into `frame.components`. */
  component: number;
  dcTable: number;
  acTable: number;
}

export interface Segment {
  marker: number;
  /** Offset of the marker's 0xFF and just past the segment. */
  start: number;
  end: number;
}

export interface JpegHeader {
  /** 0xC0 (baseline) or 0xC1 (extended sequential). */
  sofMarker: number;
  width: number;
  height: number;
  components: FrameComponent[];
  /** Offset of the SOF segment's height field. */
  heightOffset: number;
  /** Huffman tables in force at the scan, by class (DC, AC) and id. */
  huffman: (HuffmanSpec | undefined)[][];
  /** Quantisation tables in force at the scan (Pq/Tq byte and values, as in DQT), by id. */
  quant: (Uint8Array | undefined)[];
  /** MCUs per restart interval, 0 for none (T.81 B.2.4.4). */
  restartInterval: number;
  scan: ScanComponent[];
  /** Every segment before the scan data, SOS included, in file order. */
  segments: Segment[];
  /**
   * The segments libjpeg reads the colour space from (jdapimin.c default_decompress_parms): a JFIF
   * APP0 means YCbCr, an Adobe APP14's transform flag chooses RGB or YCbCr.
   */
  jfif: Segment | null;
  adobe: Segment | null;
  /** First byte of the entropy-coded data. */
  dataStart: number;
}

const SOI = 0xd8;
const SOF0 = 0xc0;
const SOF1 = 0xc1;
const DHT = 0xc4;
const SOS = 0xda;
const DQT = 0xdb;
const DRI = 0xdd;
const APP0 = 0xe0;
const APP14 = 0xee;
const COM = 0xfe;

/** More segments before the scan than any camera or editor writes: not worth the memory to list. */
const MAX_SEGMENTS = 1000;

/** libjpeg's JPEG_MAX_DIMENSION: larger images fail to decode whole, so they are not banded either. */
export const MAX_DIMENSION = 65500;

const matches = (bytes: Uint8Array, at: number, text: string) => [...text].every((c, i) => bytes[at + i] === c.charCodeAt(0));

/** The header of a file `planJpegBands` and `stitchJpegBands` can work on, or null. Never throws. */
export function readJpegHeader(bytes: Uint8Array): JpegHeader | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== SOI) return null;
  const huffman: (HuffmanSpec | undefined)[][] = [[], []];
  const quant: (Uint8Array | undefined)[] = [];
  const segments: Segment[] = [];
  let frame: Pick<JpegHeader, 'sofMarker' | 'width' | 'height' | 'components' | 'heightOffset'> | null = null;
  let restartInterval = 0;
  let jfif: Segment | null = null;
  let adobe: Segment | null = null;
  let at = 2;
  for (;;) {
    if (bytes[at] !== 0xff) return null; // stray bytes between segments: libjpeg warns, we pass
    while (bytes[at] === 0xff) at++;
    if (at + 2 >= bytes.length) return null;
    const marker = bytes[at];
    const start = at - 1;
    const length = (bytes[at + 1] << 8) | bytes[at + 2];
    const payload = at + 3;
    const end = at + 1 + length;
    // Every marker that may come before the scan has a length (T.81 B.1.1.4).
    if (length < 2 || end > bytes.length) return null;
    const segment = { marker, start, end };
    if (segments.push(segment) > MAX_SEGMENTS) return null;
    if (marker === SOF0 || marker === SOF1) {
      if (frame) return null;
      frame = readFrame(bytes, marker, payload, end);
      if (!frame) return null;
    } else if (marker === DHT) {
      if (!readHuffmanTables(bytes, payload, end, huffman)) return null;
    } else if (marker === DQT) {
      if (!readQuantTables(bytes, payload, end, quant)) return null;
    } else if (marker === DRI) {
      if (length !== 4) return null;
      restartInterval = (bytes[payload] << 8) | bytes[payload + 1];
    } else if (marker === APP0) {
      if (length - 2 >= 14 && matches(bytes, payload, 'JFIF\0')) jfif ??= segment;
    } else if (marker === APP14) {
      if (length - 2 >= 12 && matches(bytes, payload, 'Adobe')) adobe = segment; // the last one counts
    } else if (marker === SOS) {
      if (!frame) return null;
      const scan = readScan(bytes, payload, end, frame.components, huffman);
      if (!scan) return null;
      if (frame.components.some((c) => !quant[c.quantTable])) return null;
      return { ...frame, huffman, quant, restartInterval, scan, segments, jfif, adobe, dataStart: end };
    } else if (!((marker > APP0 && marker <= 0xef) || marker === COM)) {
      return null; // other frame types (progressive, lossless, arithmetic, hierarchical), DNL, DAC, SOI, EOI, reserved
    }
    at = end;
  }
}

function readFrame(bytes: Uint8Array, sofMarker: number, at: number, end: number) {
  const count = bytes[at + 5];
  if (end - at !== 6 + 3 * count || (count !== 1 && count !== 3)) return null;
  if (bytes[at] !== 8) return null;
  const height = (bytes[at + 1] << 8) | bytes[at + 2];
  const width = (bytes[at + 3] << 8) | bytes[at + 4];
  if (height === 0 || width === 0 || height > MAX_DIMENSION || width > MAX_DIMENSION) return null; // height 0: DNL
  const components: FrameComponent[] = [];
  for (let c = 0; c < count; c++) {
    const p = at + 6 + 3 * c;
    const component = { id: bytes[p], h: bytes[p + 1] >> 4, v: bytes[p + 1] & 15, quantTable: bytes[p + 2] };
    if (component.h < 1 || component.h > 4 || component.v < 1 || component.v > 4 || component.quantTable > 3) return null;
    if (components.some((other) => other.id === component.id)) return null;
    components.push(component);
  }
  // libjpeg upsamples by whole factors only ("Fractional sampling not implemented yet").
  const hMax = Math.max(...components.map((c) => c.h));
  const vMax = Math.max(...components.map((c) => c.v));
  if (components.some((c) => hMax % c.h !== 0 || vMax % c.v !== 0)) return null;
  return { sofMarker, width, height, components, heightOffset: at + 1 };
}

/** T.81 B.2.4.2; false for a malformed segment. */
function readHuffmanTables(bytes: Uint8Array, at: number, end: number, into: (HuffmanSpec | undefined)[][]): boolean {
  while (at < end) {
    if (at + 17 > end) return false;
    const tableClass = bytes[at] >> 4;
    const id = bytes[at] & 15;
    if ((tableClass !== DC && tableClass !== AC) || id > 3) return false;
    const counts = new Uint8Array(17);
    counts.set(bytes.subarray(at + 1, at + 17), 1);
    const total = counts.reduce((sum, n) => sum + n, 0);
    if (total > 256 || at + 17 + total > end) return false;
    into[tableClass][id] = { counts, symbols: bytes.slice(at + 17, at + 17 + total) };
    at += 17 + total;
  }
  return true;
}

/** T.81 B.2.4.1; false for a malformed segment. */
function readQuantTables(bytes: Uint8Array, at: number, end: number, into: (Uint8Array | undefined)[]): boolean {
  while (at < end) {
    const precision = bytes[at] >> 4;
    const id = bytes[at] & 15;
    const size = 1 + 64 * (precision + 1);
    if (precision > 1 || id > 3 || at + size > end) return false;
    into[id] = bytes.slice(at, at + size);
    at += size;
  }
  return true;
}

/** T.81 B.2.3: one sequential scan (Ss 0, Se 63, Ah Al 0) of every frame component, tables defined. */
function readScan(
  bytes: Uint8Array,
  at: number,
  end: number,
  components: FrameComponent[],
  huffman: (HuffmanSpec | undefined)[][],
): ScanComponent[] | null {
  const count = bytes[at];
  if (count !== components.length || end - at !== 4 + 2 * count) return null;
  const scan: ScanComponent[] = [];
  for (let i = 0; i < count; i++) {
    const id = bytes[at + 1 + 2 * i];
    const tables = bytes[at + 2 + 2 * i];
    const component = components.findIndex((c) => c.id === id);
    if (component < 0 || scan.some((s) => s.component === component)) return null;
    const dcTable = tables >> 4;
    const acTable = tables & 15;
    if (dcTable > 3 || acTable > 3 || !huffman[DC][dcTable] || !huffman[AC][acTable]) return null;
    scan.push({ component, dcTable, acTable });
  }
  const p = at + 1 + 2 * count;
  if (bytes[p] !== 0 || bytes[p + 1] !== 63 || bytes[p + 2] !== 0) return null;
  return scan;
}
