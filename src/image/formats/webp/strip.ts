import { concat, damaged } from '../../bytes';
import { orientationOnlyExif } from '../../exif';
import type { WebpHeader } from './header';
import { riffHeader, webpChunk, webpChunks } from './riff';

/** Chunks that carry the image; everything else (EXIF, "XMP ", ICCP, unknown/INFO chunks) is dropped. */
const IMAGE_CHUNKS = new Set(['VP8X', 'VP8 ', 'VP8L', 'ALPH', 'ANIM', 'ANMF']);
const ICC_FLAG = 0x20;
const EXIF_FLAG = 0x08;
const XMP_FLAG = 0x04;

/**
 * Removes metadata chunks, clears the ICC/EXIF/XMP flags of VP8X and rewrites the RIFF size; image
 * chunk payloads are copied byte for byte (odd sizes get their pad byte). A non-1 EXIF orientation
 * of an extended (VP8X) file is kept as a minimal EXIF chunk, so the image displays as before.
 */
export function stripWebp(bytes: Uint8Array, { orientation }: WebpHeader): Uint8Array {
  const parts: Uint8Array[] = [];
  let vp8x: Uint8Array | null = null;
  let hasImage = false;
  for (const chunk of webpChunks(bytes)) {
    if (!IMAGE_CHUNKS.has(chunk.type)) continue;
    const copy = bytes.slice(chunk.start, chunk.data + chunk.length);
    if (chunk.type === 'VP8X') vp8x = copy;
    else hasImage = true;
    parts.push(copy);
    if (chunk.length & 1) parts.push(new Uint8Array(1));
  }
  if (!hasImage) throw damaged('webp: no image chunk');
  if (vp8x) {
    vp8x[8] &= ~(ICC_FLAG | EXIF_FLAG | XMP_FLAG);
    if (orientation !== 1) {
      vp8x[8] |= EXIF_FLAG;
      parts.push(webpChunk('EXIF', orientationOnlyExif(orientation)));
    }
  }
  const body = concat(parts);
  return concat([riffHeader(4 + body.length), body]);
}


