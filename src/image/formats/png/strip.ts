import { concat, damaged } from '../../bytes';
import { orientationOnlyExif } from '../../exif';
import { PNG_SIGNATURE, pngChunk, pngChunks, type PngHeader } from './header';

/**
 * Ancillary chunks that affect how the pixels look (or animate) and are kept. Every other
 * ancillary chunk is dropped: tEXt, zTXt, iTXt, tIME, eXIf, iCCP and unknown/private chunks.
 */
const KEPT_ANCILLARY = new Set([
  'tRNS', 'gAMA', 'cHRM', 'sRGB', 'cICP', 'mDCV', 'cLLI', 'sBIT', 'bKGD', 'hIST', 'pHYs', 'sPLT',
  'acTL', 'fcTL', 'fdAT',
]);

/** Critical chunks have an upper-case first letter; they are always kept. */
function isKept(type: string): boolean {
  return (type.charCodeAt(0) & 0x20) === 0 || KEPT_ANCILLARY.has(type);
}

/**
 * Removes metadata chunks, copying every kept chunk (CRC included) byte for byte, and drops bytes
 * after IEND. A non-1 EXIF orientation is kept as a minimal eXIf chunk after IHDR, so the image
 * displays as before. CRCs are not verified here: the pipeline checks them (verifyPngChunks) before any strip.
 */
export function stripPng(bytes: Uint8Array, { orientation }: PngHeader): Uint8Array {
  const parts: Uint8Array[] = [bytes.subarray(0, PNG_SIGNATURE.length)];
  let sawEnd = false;
  for (const chunk of pngChunks(bytes)) {
    if (isKept(chunk.type)) parts.push(bytes.subarray(chunk.start, chunk.end));
    if (chunk.type === 'IHDR' && orientation !== 1) parts.push(pngChunk('eXIf', orientationOnlyExif(orientation)));
    if (chunk.type === 'IEND') sawEnd = true;
  }
  if (!sawEnd) throw damaged('png: no IEND');
  return concat(parts);
}

