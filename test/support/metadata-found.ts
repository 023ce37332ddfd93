/**
 * What a file still carries that a metadata strip must remove: EXIF (beyond an orientation-only
 * block), XMP, ICC profiles, IPTC, comments and text chunks. Written independently of the strippers in src/image/formats
 * (from the container specs) so the strip tests do not grade their own homework.
 */
import { findBox, isoBoxes } from '../../src/image/formats/avif/boxes';
import { jpegSegments } from '../../src/image/formats/jpeg/header';
import { pngChunks } from '../../src/image/formats/png/header';
import { webpChunks } from '../../src/image/formats/webp/riff';
import { EXIF_HEADER, orientationOnlyExif } from '../../src/image/exif';
import type { ImageFormat } from '../../src/image/types';
import { readDimensions } from './formats';

const latin1 = (bytes: Uint8Array) => new TextDecoder('latin1').decode(bytes);

/** True for an EXIF payload ("Exif\0\0" optional) that holds nothing but one Orientation tag. */
function isOrientationOnly(payload: Uint8Array): boolean {
  const tiff = latin1(payload.subarray(0, 6)) === latin1(EXIF_HEADER) ? payload.subarray(6) : payload;
  const orientation = tiff[19];
  if (!(orientation >= 1 && orientation <= 8)) return false;
  const expected = orientationOnlyExif(orientation as 1);
  return tiff.length === expected.length && tiff.every((byte, i) => byte === expected[i]);
}

export function metadataFound(format: ImageFormat, bytes: Uint8Array): string[] {
  switch (format) {
    case 'jpeg':
      return jpegMetadata(bytes);
    case 'png':
      return pngMetadata(bytes);
    case 'webp':
      return webpMetadata(bytes);
    case 'avif':
      return avifMetadata(bytes);
  }
}

function jpegMetadata(bytes: Uint8Array): string[] {
  const found: string[] = [];
  for (const segment of jpegSegments(bytes)) {
    const { marker } = segment;
    const payload = bytes.subarray(segment.payload, segment.end);
    if (marker === 0xfe) found.push('COM comment');
    else if (marker === 0xe0 && !latin1(payload.subarray(0, 5)).startsWith('JFIF')) found.push('APP0 (not JFIF)');
    else if (marker === 0xe1 && !isOrientationOnly(payload)) found.push(`APP1 ${latin1(payload.subarray(0, 28)).split('\0')[0]}`);
    else if (marker === 0xee && !latin1(payload.subarray(0, 5)).startsWith('Adobe')) found.push('APP14 (not Adobe)');
    else if (marker >= 0xe2 && marker <= 0xef && marker !== 0xee) found.push(`APP${marker - 0xe0} ${latin1(payload.subarray(0, 12)).split('\0')[0]}`);
  }
  return found;
}

function pngMetadata(bytes: Uint8Array): string[] {
  const found: string[] = [];
  for (const chunk of pngChunks(bytes)) {
    if (['tEXt', 'zTXt', 'iTXt', 'iCCP', 'tIME'].includes(chunk.type)) found.push(chunk.type);
    if (chunk.type === 'eXIf' && !isOrientationOnly(bytes.subarray(chunk.data, chunk.data + chunk.length))) found.push('eXIf');
  }
  return found;
}

function webpMetadata(bytes: Uint8Array): string[] {
  const found: string[] = [];
  for (const chunk of webpChunks(bytes)) {
    if (chunk.type === 'ICCP' || chunk.type === 'XMP ') found.push(chunk.type);
    if (chunk.type === 'EXIF' && !isOrientationOnly(bytes.subarray(chunk.data, chunk.data + chunk.length))) found.push('EXIF');
    if (/^I[A-Z]{3}$/.test(chunk.type) && chunk.type !== 'ICCP') found.push(`RIFF INFO ${chunk.type}`);
  }
  return found;
}

function avifMetadata(bytes: Uint8Array): string[] {
  readDimensions('avif', bytes);
  const found: string[] = [];
  const meta = findBox(bytes, { body: 0, end: bytes.length }, 'meta');
  if (!meta) return found;
  const iinf = findBox(bytes, meta, 'iinf', 4);
  for (const infe of iinf ? isoBoxes(bytes, iinf.body + (bytes[iinf.body] === 0 ? 6 : 8), iinf.end) : []) {
    const version = bytes[infe.body];
    if (version < 2) continue;
    const typeAt = infe.body + 4 + (version === 2 ? 2 : 4) + 2;
    const itemType = latin1(bytes.subarray(typeAt, typeAt + 4));
    if (itemType === 'Exif' || itemType === 'mime' || itemType === 'uri ') found.push(`${itemType} item`);
  }
  const ipco = findBox(bytes, findBox(bytes, meta, 'iprp', 4) ?? { body: 0, end: 0 }, 'ipco');
  for (const box of ipco ? isoBoxes(bytes, ipco.body, ipco.end) : []) {
    const colourType = latin1(bytes.subarray(box.body, box.body + 4));
    if (box.type === 'colr' && (colourType === 'prof' || colourType === 'rICC')) found.push(`colr ${colourType}`);
  }
  for (const box of isoBoxes(bytes, meta.body + 4, meta.end)) if (['xml ', 'bxml'].includes(box.type)) found.push(box.type);
  return found;
}
