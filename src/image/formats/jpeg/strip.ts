import { concat, damaged, startsWith } from '../../bytes';
import { EXIF_HEADER, orientationOnlyExif, type Orientation } from '../../exif';
import { ENTROPY, jpegSegments, type JpegHeader, type JpegSegment } from './header';

const APP0 = 0xe0;
const APP1 = 0xe1;
const APP14 = 0xee;
const COM = 0xfe;

/**
 * Removes APP1-APP15 (EXIF, XMP, ICC, IPTC, ...), COM and non-JFIF APP0 segments, and everything
 * after EOI. Keeps JFIF APP0, Adobe APP14 (its colour transform is needed to decode CMYK/YCCK) and
 * every frame, table and scan segment; scan data is copied byte for byte. A non-1 EXIF orientation
 * is kept as a single minimal APP1 after SOI/APP0, so the image still displays upright.
 */
export function stripJpeg(bytes: Uint8Array, { orientation }: JpegHeader): Uint8Array {
  const parts: Uint8Array[] = [bytes.subarray(0, 2)];
  let orientationPending = orientation !== 1;
  let sawScanData = false;
  for (const segment of jpegSegments(bytes)) {
    if (orientationPending && segment.marker !== APP0) {
      parts.push(orientationApp1(orientation));
      orientationPending = false;
    }
    if (segment.marker === ENTROPY) sawScanData = true;
    if (isKept(bytes, segment)) parts.push(bytes.subarray(segment.start, segment.end));
  }
  if (!sawScanData) throw damaged('jpeg: no scan data');
  return concat(parts);
}

function isKept(bytes: Uint8Array, segment: JpegSegment): boolean {
  const { marker, payload, end } = segment;
  const inSegment = bytes.subarray(0, end);
  if (marker === APP0) return startsWith(inSegment, payload, 'JFIF\0');
  if (marker === APP14) return startsWith(inSegment, payload, 'Adobe');
  return !(marker >= APP1 && marker <= 0xef) && marker !== COM;
}

function orientationApp1(orientation: Orientation): Uint8Array {
  const tiff = orientationOnlyExif(orientation);
  const length = 2 + EXIF_HEADER.length + tiff.length;
  return concat([new Uint8Array([0xff, APP1, length >> 8, length & 0xff]), EXIF_HEADER, tiff]);
}
