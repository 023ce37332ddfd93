import { AppError } from '../../../errors';
import { concat, startsWith, u16be, u8 } from '../../bytes';
import { findBox, type IsoBox, isoBoxes, primaryItemProperties } from '../../formats/avif/header';
import { jpegSegments, SOS } from '../../formats/jpeg/header';
import { pngChunks } from '../../formats/png/header';
import { webpChunks } from '../../formats/webp/header';
import type { ImageFormat } from '../../types';
import type { Cicp } from './cicp';

/**
 * Finds the embedded ICC profile of the primary image. The container was verified elsewhere; any
 * structural surprise here just means "no profile".
 */
export async function embeddedProfile(format: ImageFormat, bytes: Uint8Array): Promise<Uint8Array | null> {
  try {
    switch (format) {
      case 'jpeg':
        return jpegProfile(bytes);
      case 'png':
        return await pngProfile(bytes);
      case 'webp':
        return webpProfile(bytes);
      case 'avif':
        return avifProfile(bytes);
    }
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

const APP2 = 0xe2;
const ICC_MARKER = 'ICC_PROFILE\0';

/** APP2 `ICC_PROFILE\0` segments: sequence number (1-based) and count, then a slice of the profile. */
function jpegProfile(bytes: Uint8Array): Uint8Array | null {
  const slices = new Map<number, Uint8Array>();
  let count = 0;
  for (const segment of jpegSegments(bytes)) {
    if (segment.marker === SOS) break;
    if (segment.marker !== APP2 || !startsWith(bytes, segment.payload, ICC_MARKER)) continue;
    const sequence = u8(bytes, segment.payload + 12);
    const total = u8(bytes, segment.payload + 13);
    // libjpeg's read_icc_profile also gives up on inconsistent counts and duplicate numbers.
    if (total === 0 || (count !== 0 && total !== count) || sequence === 0 || sequence > total || slices.has(sequence)) return null;
    count = total;
    slices.set(sequence, bytes.subarray(segment.payload + 14, segment.end));
  }
  if (count === 0 || slices.size !== count) return null;
  return concat(Array.from({ length: count }, (_, i) => slices.get(i + 1)!));
}

/** Largest inflated profile accepted; real profiles are well under 1 MB. */
export const MAX_INFLATED_PROFILE = 4 * 1024 * 1024;

/** `iCCP` before the image data: name (1-79 bytes), NUL, compression method 0, zlib stream. */
async function pngProfile(bytes: Uint8Array): Promise<Uint8Array | null> {
  for (const chunk of pngChunks(bytes)) {
    if (chunk.type === 'IDAT') return null;
    if (chunk.type !== 'iCCP') continue;
    const data = bytes.subarray(chunk.data, chunk.data + chunk.length);
    const nul = data.indexOf(0);
    if (nul < 1 || nul > 79 || data[nul + 1] !== 0) return null;
    return inflate(data.subarray(nul + 2), MAX_INFLATED_PROFILE);
  }
  return null;
}

/** zlib-inflates `data`, or null when it is corrupt or inflates to more than `limit` bytes. */
export async function inflate(data: Uint8Array, limit: number): Promise<Uint8Array | null> {
  const reader = new Blob([data.slice()]).stream().pipeThrough(new DecompressionStream('deflate')).getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return concat(parts);
      total += value.length;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        return null;
      }
      parts.push(value);
    }
  } catch {
    return null;
  }
}

const VP8X_ICC_FLAG = 0x20;

/** The `ICCP` chunk of an extended (VP8X) file whose flags announce it, as libwebp's readers require. */
function webpProfile(bytes: Uint8Array): Uint8Array | null {
  let first = true;
  for (const chunk of webpChunks(bytes)) {
    if (first && (chunk.type !== 'VP8X' || (u8(bytes, chunk.data) & VP8X_ICC_FLAG) === 0)) return null;
    first = false;
    if (chunk.type === 'ICCP') return bytes.subarray(chunk.data, chunk.data + chunk.length);
  }
  return null;
}

/**
 * A `colr` property of type `prof` or `rICC` associated with the primary item; when that
 * association cannot be resolved, the first such `colr` in `ipco`.
 */
function avifProfile(bytes: Uint8Array): Uint8Array | null {
  const primary = primaryItemProperties(bytes);
  const candidates = primary ?? allProperties(bytes);
  for (const box of candidates) {
    if (box.type !== 'colr' || box.end - box.body < 4) continue;
    const kind = String.fromCharCode(...bytes.subarray(box.body, box.body + 4));
    if (kind === 'prof' || kind === 'rICC') return bytes.subarray(box.body + 4, box.end);
  }
  return null;
}

/**
 * The colour code points of the primary image: AVIF `colr` of type `nclx` (colour_primaries u16,
 * transfer_characteristics u16, matrix_coefficients u16, full_range_flag 1 bit) associated with the
 * primary item (when that association cannot be resolved, the first `nclx` in `ipco`), or PNG
 * `cICP` (primaries u8, transfer u8, matrix u8 which must be 0, full-range u8) before the image
 * data. Null when there is none or the container is unreadable; never throws for a bad container.
 * Range and matrix are the decoder's business (YUV -> RGB); PNG's narrow range (full-range 0,
 * unheard of in practice) is not expanded.
 */
export function embeddedCicp(format: ImageFormat, bytes: Uint8Array): Cicp | null {
  try {
    if (format === 'avif') return avifNclx(bytes);
    if (format === 'png') return pngCicp(bytes);
    return null;
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

function avifNclx(bytes: Uint8Array): Cicp | null {
  for (const box of primaryItemProperties(bytes) ?? allProperties(bytes)) {
    if (box.type !== 'colr' || box.end - box.body < 11) continue;
    if (String.fromCharCode(...bytes.subarray(box.body, box.body + 4)) !== 'nclx') continue;
    return { primaries: u16be(bytes, box.body + 4), transfer: u16be(bytes, box.body + 6) };
  }
  return null;
}

/** PNG 3rd edition: one `cICP` of 4 bytes before PLTE and IDAT; a chunk with a matrix other than 0 (RGB) is invalid and ignored, as libpng does. */
function pngCicp(bytes: Uint8Array): Cicp | null {
  for (const chunk of pngChunks(bytes)) {
    if (chunk.type === 'IDAT' || chunk.type === 'PLTE') return null;
    if (chunk.type !== 'cICP') continue;
    if (chunk.length !== 4 || u8(bytes, chunk.data + 2) !== 0) return null;
    return { primaries: u8(bytes, chunk.data), transfer: u8(bytes, chunk.data + 1) };
  }
  return null;
}

function allProperties(bytes: Uint8Array): IsoBox[] {
  const meta = findBox(bytes, { body: 0, end: bytes.length }, 'meta');
  const iprp = meta && findBox(bytes, meta, 'iprp', 4);
  const ipco = iprp && findBox(bytes, iprp, 'ipco');
  return ipco ? [...isoBoxes(bytes, ipco.body, ipco.end)] : [];
}
