import { concat, damaged, need, startsWith, u16be } from '../../bytes';
import { EXIF_HEADER, exifOrientation } from '../../exif';
import type { ImageHeader } from '../../header';
import type { Dimensions } from '../../types';

/** Marker values used by the walker and its callers. */
export const SOI = 0xd8;
export const EOI = 0xd9;
export const SOS = 0xda;
/** Pseudo marker for the entropy-coded bytes that follow an SOS header (0xFF00 is never a marker). */
export const ENTROPY = 0x00;

export interface JpegSegment {
  /** Marker byte (0xC0..0xFE), or ENTROPY for scan data. */
  marker: number;
  /** Offset of the marker's 0xFF (after any fill bytes); for ENTROPY the first data byte. */
  start: number;
  /** Offset of the payload after the 2-byte length; equals `end` for standalone markers. */
  payload: number;
  /** Offset just after the segment (for SOS: after its header, the scan data is the next item). */
  end: number;
}

/** SOF0-3, 5-7, 9-11, 13-15: the frame headers that carry the image size. */
export function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function isStandalone(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7); // TEM, RST0-7
}

/**
 * Walks the segments after SOI in file order, including the scan data after each SOS, until EOI
 * (yielded) or the end of the bytes. Stray bytes between segments are skipped (as libjpeg does),
 * runs of 0xFF fill bytes are skipped, and a segment whose length runs past the end throws
 * `damaged`. Lazy: callers that stop early (at SOF or SOS) never pay for scanning scan data.
 */
export function* jpegSegments(bytes: Uint8Array, from = 2): Generator<JpegSegment> {
  if (!(bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === SOI)) throw damaged('jpeg: no SOI');
  let at = from;
  while (at < bytes.length) {
    const ff = bytes.indexOf(0xff, at);
    if (ff < 0) return;
    let m = ff + 1;
    while (m < bytes.length && bytes[m] === 0xff) m++; // fill bytes
    if (m >= bytes.length) return;
    const marker = bytes[m];
    const start = m - 1;
    if (marker === 0x00) {
      at = m + 1; // stuffed byte outside a scan: stray data, skip it
      continue;
    }
    if (marker === SOI || (marker > 0x01 && marker < 0xc0)) {
      throw damaged(`jpeg: marker ${marker.toString(16)} at ${start}`); // libjpeg: unsupported marker
    }
    if (marker === EOI || isStandalone(marker)) {
      yield { marker, start, payload: m + 1, end: m + 1 };
      if (marker === EOI) return;
      at = m + 1;
      continue;
    }
    const length = u16be(bytes, m + 1);
    if (length < 2) throw damaged(`jpeg: segment ${marker.toString(16)} length ${length}`);
    const end = m + 1 + length;
    need(bytes, m + 1, length, `jpeg: segment ${marker.toString(16)}`);
    yield { marker, start, payload: m + 3, end };
    at = end;
    if (marker === SOS) {
      const dataEnd = scanDataEnd(bytes, end);
      if (dataEnd > end) yield { marker: ENTROPY, start: end, payload: end, end: dataEnd };
      at = dataEnd;
    }
  }
}

/**
 * Offset of the marker that ends entropy-coded data, or the end of the bytes. 0xFF00 stuffing, RSTn
 * and 0xFF01-0xFFBF stay in the data: the latter cannot be real markers and libjpeg skips them as
 * corrupt data while resynchronising, so a lossless copy must keep them too.
 */
function scanDataEnd(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const ff = bytes.indexOf(0xff, at);
    if (ff < 0 || ff + 1 >= bytes.length) return bytes.length;
    const next = bytes[ff + 1];
    if (next === 0xff) at = ff + 1; // fill byte before a marker
    else if (next < 0xc0 || (next >= 0xd0 && next <= 0xd7)) at = ff + 2;
    else return ff;
  }
}

/**
 * Frame types the bundled mozjpeg decodes: baseline, extended and progressive Huffman (SOF0-2).
 * It is built without arithmetic decoding and, like libjpeg-turbo 2, has no lossless or
 * hierarchical support, so SOF3, SOF5-7, SOF9-11 and SOF13-15 fail with "Unsupported JPEG
 * process" or "arithmetic coding is not implemented"; they are refused from the header.
 */
const DECODABLE_FRAMES = new Set([0xc0, 0xc1, 0xc2]);

/** What a decoder's memory depends on, from the frame header and the markers before the first scan. */
export interface JpegFrame extends Dimensions {
  /** 1 (grey), 3 (YCbCr or RGB) or 4 (CMYK or YCCK). */
  components: number;
  /** Sampling factors of each component, in frame order (4:2:0 is [{2, 2}, {1, 1}, {1, 1}]). */
  sampling: { h: number; v: number }[];
  /** SOF2: all scans are read into a whole-image coefficient buffer before the first row comes out. */
  progressive: boolean;
  /**
   * libjpeg reads every scan into a whole-image coefficient buffer before the first row comes out:
   * a progressive file, or a sequential one whose first scan lacks a component (jdinput.c).
   */
  multiScan: boolean;
  /** The Adobe APP14 marker's transform (0 RGB or CMYK, 1 YCbCr, 2 YCCK), null without the marker. */
  adobeTransform: number | null;
}

export interface JpegHeader extends ImageHeader {
  frame: JpegFrame;
  /** Offset of the first SOS marker: the container checks go on from there. */
  firstScan: number;
}

const APP1 = 0xe1;
const APP2 = 0xe2;
const APP14 = 0xee;
const ICC_MARKER = 'ICC_PROFILE\0';
const XMP_MARKER = 'http://ns.adobe.com/xap/1.0/\0';

/**
 * The header: every segment before the first scan, read once. The size is the frame header's, the
 * only size libjpeg allocates from. Refused: a second SOFn before the first scan (libjpeg: "Invalid
 * JPEG file structure: two SOF markers"), a height of 0 (set later by a DNL marker, which libjpeg
 * does not support), a sample precision other than 8, component counts other than 1, 3 or 4, and
 * sampling factors outside 1..4. The first APP1 Exif block gives the orientation; APP2
 * `ICC_PROFILE` slices make the profile (only when complete and consistent, as libjpeg's
 * read_icc_profile); the first APP1 XMP packet is noted.
 */
export function readJpegHeader(bytes: Uint8Array): JpegHeader {
  let frame: Omit<JpegFrame, 'adobeTransform' | 'multiScan'> | null = null;
  let adobeTransform: number | null = null;
  let firstScan = -1;
  let firstScanComponents = 0;
  let exif: Uint8Array | null = null;
  let xmp: Uint8Array | null = null;
  const icc = new IccSlices();
  for (const segment of jpegSegments(bytes)) {
    const { marker, payload, end } = segment;
    const inSegment = bytes.subarray(0, end);
    if (isStartOfFrame(marker)) {
      if (frame) throw damaged('jpeg: a second SOF marker');
      frame = readFrameHeader(bytes, segment);
    }
    // As libjpeg (jdmarker.c): every APP14 of at least 12 bytes that starts with "Adobe"; the last one counts.
    if (marker === APP14 && end - payload >= 12 && startsWith(bytes, payload, 'Adobe')) adobeTransform = bytes[payload + 11];
    if (marker === APP1 && !exif && startsWith(inSegment, payload, EXIF_HEADER)) exif = bytes.subarray(payload + EXIF_HEADER.length, end);
    if (marker === APP1 && !xmp && startsWith(inSegment, payload, XMP_MARKER)) xmp = bytes.subarray(payload + XMP_MARKER.length, end);
    if (marker === APP2 && startsWith(inSegment, payload, ICC_MARKER)) icc.add(bytes, segment);
    if (marker === SOS || marker === EOI) firstScan = segment.start;
    if (marker === SOS && end > payload) firstScanComponents = bytes[payload];
    if (marker === SOS || marker === EOI) break;
  }
  if (!frame) throw damaged('jpeg: no SOF before the scan data');
  const profile = icc.profile();
  return {
    format: 'jpeg',
    width: frame.width,
    height: frame.height,
    orientation: exifOrientation(exif),
    colour: profile ? [{ kind: 'icc', bytes: profile }] : [],
    alpha: false,
    bitDepth: 8,
    exif,
    xmp,
    frame: { ...frame, multiScan: frame.progressive || firstScanComponents < frame.components, adobeTransform },
    firstScan: firstScan < 0 ? bytes.length : firstScan,
  };
}

/** APP2 `ICC_PROFILE\0` segments: sequence number (1-based) and count, then a slice of the profile. */
class IccSlices {
  private readonly slices = new Map<number, Uint8Array>();
  private count = 0;
  private broken = false;

  add(bytes: Uint8Array, segment: JpegSegment): void {
    if (segment.end - segment.payload < 14) {
      this.broken = true;
      return;
    }
    const sequence = bytes[segment.payload + 12];
    const total = bytes[segment.payload + 13];
    // libjpeg's read_icc_profile also gives up on inconsistent counts and duplicate numbers.
    if (total === 0 || (this.count !== 0 && total !== this.count) || sequence === 0 || sequence > total || this.slices.has(sequence)) this.broken = true;
    this.count = total;
    this.slices.set(sequence, bytes.subarray(segment.payload + 14, segment.end));
  }

  profile(): Uint8Array | null {
    if (this.broken || this.count === 0 || this.slices.size !== this.count) return null;
    return concat(Array.from({ length: this.count }, (_, i) => this.slices.get(i + 1)!));
  }
}

function readFrameHeader(bytes: Uint8Array, sof: JpegSegment): Omit<JpegFrame, 'adobeTransform' | 'multiScan'> {
  const name = `SOF${sof.marker - 0xc0}`;
  if (!DECODABLE_FRAMES.has(sof.marker)) {
    const kind = sof.marker === 0xc3 || sof.marker === 0xcb ? 'lossless' : sof.marker >= 0xc9 && sof.marker <= 0xcb ? 'arithmetic-coded' : 'hierarchical';
    throw damaged(`jpeg: ${name} (${kind}) JPEGs are not supported by the decoder`);
  }
  const at = sof.payload;
  const components = sof.end - at >= 6 ? bytes[at + 5] : -1;
  if (components < 0 || sof.end - at !== 6 + 3 * components) throw damaged(`jpeg: ${name} length ${sof.end - at}`);
  const precision = bytes[at];
  const height = u16be(bytes, at + 1);
  const width = u16be(bytes, at + 3);
  if (width === 0 || height === 0) throw damaged(`jpeg: SOF size ${width}x${height} (DNL is not supported)`);
  if (precision !== 8) throw damaged(`jpeg: ${precision}-bit samples`);
  if (components !== 1 && components !== 3 && components !== 4) throw damaged(`jpeg: ${components} components`);
  const sampling: JpegFrame['sampling'] = [];
  for (let c = 0; c < components; c++) {
    const factors = bytes[at + 6 + 3 * c + 1];
    const [h, v] = [factors >> 4, factors & 15];
    if (h < 1 || h > 4 || v < 1 || v > 4) throw damaged(`jpeg: sampling factors ${h}x${v}`);
    sampling.push({ h, v });
  }
  return { width, height, components, sampling, progressive: sof.marker === 0xc2 };
}

/**
 * The container checks after the header: scan data and the EOI marker after it, and no second
 * frame header between the scans. mozjpeg fills a truncated scan with grey and reports success, so
 * a cut-off upload would otherwise come back as a "good" image. The walk goes on from the first scan.
 */
export function verifyJpegStructure(bytes: Uint8Array, header: JpegHeader): void {
  let sawScanData = false;
  for (const segment of jpegSegments(bytes, header.firstScan)) {
    if (isStartOfFrame(segment.marker)) throw damaged('jpeg: a second SOF marker'); // libjpeg refuses it, also between scans
    if (segment.marker === ENTROPY) sawScanData = true;
    if (segment.marker === EOI) {
      if (!sawScanData) throw damaged('jpeg: EOI before any image data');
      return;
    }
  }
  throw damaged('jpeg: truncated (no EOI marker after the scan data)');
}
