import { damaged, fourCC, need, u32be, startsWith } from '../../bytes';
import { exifOrientation, tiffBlock } from '../../exif';
import type { ColourDescription, ImageHeader } from '../../header';
import type { Dimensions } from '../../types';
import { CRC_START, crcUpdate, crcValue } from './crc';
import { GREY, PALETTE, RGB } from './structure';

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

export interface PngChunk {
  type: string;
  /** Offset of the chunk's length field. */
  start: number;
  /** Offset of the chunk data. */
  data: number;
  /** Data length. */
  length: number;
  /** Offset just after the CRC. */
  end: number;
}

/**
 * Walks the chunks after the signature until IEND (yielded) or the end of the bytes. A chunk whose
 * length runs past the end throws `damaged`; CRCs are not checked here.
 */
export function* pngChunks(bytes: Uint8Array, from: number = PNG_SIGNATURE.length): Generator<PngChunk> {
  if (!startsWith(bytes, 0, PNG_SIGNATURE)) throw damaged('png: bad signature');
  let at = from;
  while (at < bytes.length) {
    const length = u32be(bytes, at);
    const type = fourCC(bytes, at + 4);
    if (length > 0x7fffffff) throw damaged(`png: chunk ${JSON.stringify(type)} length ${length}`);
    need(bytes, at + 8, length + 4, `png: chunk ${JSON.stringify(type)}`);
    const chunk = { type, start: at, data: at + 8, length, end: at + 12 + length };
    yield chunk;
    if (type === 'IEND') return;
    at = chunk.end;
  }
}

/** Allowed bit depths per colour type (PNG spec, table 11.1). */
const BIT_DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

export interface PngHeader extends ImageHeader {
  colourType: number;
  interlaced: boolean;
  /** PLTE (RGB triples) of a palette image, as found; the decoder refuses one that is missing or the wrong size. */
  palette: Uint8Array | null;
  /**
   * A usable tRNS: alphas of the first palette entries (type 3), or the one transparent sample
   * value per channel at the file's bit depth (types 0 and 2). Null when absent or ignored.
   */
  transparency: { paletteAlphas: Uint8Array } | { key: number[] } | null;
  /** Offset of the first IDAT chunk (the default image is the run of IDAT chunks from there), -1 without one. */
  imageData: number;
}

/**
 * The header: IHDR, which must be the first chunk, with its fields and CRC checked, then the chunks
 * as far as they are sound (the container checks report damage after the pixel limit): PLTE and
 * tRNS, cICP and iCCP before the image data, the first eXIf and the XMP packet (iTXt
 * "XML:com.adobe.xmp", uncompressed). Ancillary chunks that break the rules are ignored as libpng
 * ignores them (a tRNS of the wrong length, before a needed PLTE, or on a type with alpha).
 */
export function readPngHeader(bytes: Uint8Array): PngHeader {
  const { width, height, bitDepth, colourType, interlaced } = readIhdr(bytes);
  let palette: Uint8Array | null = null;
  let tRNS: Uint8Array | null = null;
  let tRNSSeen = false;
  let cicp: ColourDescription | null | undefined;
  let iccp: ColourDescription | null | undefined;
  let exif: Uint8Array | null = null;
  let xmp: Uint8Array | null = null;
  let imageData = -1;
  try {
    for (const chunk of pngChunks(bytes)) {
      const data = bytes.subarray(chunk.data, chunk.data + chunk.length);
      const beforeImage = imageData < 0;
      if (chunk.type === 'IDAT' && beforeImage) imageData = chunk.start;
      if (chunk.type === 'PLTE' && beforeImage && palette === null) palette = data;
      if (chunk.type === 'PLTE' || chunk.type === 'IDAT') cicp ??= null; // cICP must come before both
      // libpng: tRNS for a palette image must follow PLTE ("out of place" otherwise, and ignored).
      if (chunk.type === 'tRNS' && beforeImage) {
        tRNSSeen = true;
        if (tRNS === null && (colourType !== PALETTE || palette !== null)) tRNS = data;
      }
      if (chunk.type === 'cICP' && cicp === undefined) cicp = readCicp(data);
      if (chunk.type === 'iCCP' && beforeImage && iccp === undefined) iccp = compressedProfile(data);
      if (chunk.type === 'eXIf' && exif === null) exif = tiffBlock(data);
      if (chunk.type === 'iTXt' && xmp === null) xmp = xmpPacket(data);
    }
  } catch {
    // Damage further on is the container checks' to report.
  }
  return {
    format: 'png',
    width,
    height,
    orientation: exifOrientation(exif),
    colour: [cicp, iccp].filter((description): description is ColourDescription => !!description),
    alpha: colourType === 4 || colourType === 6 || tRNSSeen,
    bitDepth,
    exif,
    xmp,
    colourType,
    interlaced,
    palette: colourType === PALETTE ? palette : null,
    transparency: tRNS && readTransparency(tRNS, colourType, palette),
    imageData,
  };
}

function readIhdr(bytes: Uint8Array) {
  const first = pngChunks(bytes).next();
  if (first.done || first.value.type !== 'IHDR' || first.value.length !== 13) {
    throw damaged('png: IHDR is not the first chunk');
  }
  const at = first.value.data;
  const width = u32be(bytes, at);
  const height = u32be(bytes, at + 4);
  const [bitDepth, colourType, compression, filter, interlace] = bytes.subarray(at + 8, at + 13);
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    throw damaged(`png: IHDR size ${width}x${height}`);
  }
  if (!BIT_DEPTHS[colourType]?.includes(bitDepth) || compression !== 0 || filter !== 0 || interlace > 1) {
    throw damaged(`png: IHDR fields depth=${bitDepth} colour=${colourType} ${compression}/${filter}/${interlace}`);
  }
  if (crc32(bytes.subarray(at - 4, at + 13)) !== u32be(bytes, at + 13)) throw damaged('png: IHDR CRC');
  return { width, height, bitDepth, colourType, interlaced: interlace === 1 };
}

/** PNG 3rd edition: `cICP` of 4 bytes; one with a matrix other than 0 (RGB) is invalid and ignored, as libpng does. */
function readCicp(data: Uint8Array): ColourDescription | null {
  if (data.length !== 4 || data[2] !== 0) return null;
  return { kind: 'cicp', primaries: data[0], transfer: data[1] };
}

/** `iCCP`: name (1-79 bytes), NUL, compression method 0, then the zlib stream. */
function compressedProfile(data: Uint8Array): ColourDescription | null {
  const nul = data.indexOf(0);
  if (nul < 1 || nul > 79 || data[nul + 1] !== 0) return null;
  return { kind: 'icc-deflated', bytes: data.subarray(nul + 2) };
}

const XMP_KEYWORD = 'XML:com.adobe.xmp\0';

/** iTXt: keyword, NUL, compression flag and method, language tag, NUL, translated keyword, NUL, text. */
function xmpPacket(data: Uint8Array): Uint8Array | null {
  if (!startsWith(data, 0, XMP_KEYWORD) || data[XMP_KEYWORD.length] !== 0) return null;
  const language = data.indexOf(0, XMP_KEYWORD.length + 2);
  const translated = language < 0 ? -1 : data.indexOf(0, language + 1);
  return translated < 0 ? null : data.subarray(translated + 1);
}

function readTransparency(data: Uint8Array, colourType: number, palette: Uint8Array | null): PngHeader['transparency'] {
  if (colourType === PALETTE) {
    const entries = (palette?.length ?? 0) / 3;
    return data.length === 0 || data.length > entries ? null : { paletteAlphas: data };
  }
  if (colourType === GREY && data.length === 2) return { key: [(data[0] << 8) | data[1]] };
  if (colourType === RGB && data.length === 6) return { key: [0, 2, 4].map((at) => (data[at] << 8) | data[at + 1]) };
  return null;
}

/** CRC-32 as PNG computes it (over chunk type and data). */
export function crc32(data: Uint8Array): number {
  return crcValue(crcUpdate(CRC_START, data));
}

/**
 * Every chunk's CRC, and at least one IDAT before IEND. libpng refuses such files too;
 * a decoder that skipped the checks would return wrong pixels for some.
 * APNG frames (`fcTL`) must lie inside the IHDR size, and one before the first IDAT (the default
 * image is the first frame) must be exactly that size: the decoder decodes only the default image,
 * but sizes it from that fcTL.
 */
export function verifyPngChunks(bytes: Uint8Array, image: Dimensions): void {
  let sawImageData = false;
  let sawEnd = false;
  for (const chunk of pngChunks(bytes)) {
    if (crc32(bytes.subarray(chunk.start + 4, chunk.data + chunk.length)) !== u32be(bytes, chunk.data + chunk.length)) {
      throw damaged(`png: CRC of chunk ${JSON.stringify(chunk.type)}`);
    }
    if (chunk.type === 'fcTL') verifyFrameControl(bytes, chunk, image, !sawImageData);
    if (chunk.type === 'IDAT') sawImageData = true;
    if (chunk.type === 'IEND') sawEnd = true;
  }
  if (!sawImageData) throw damaged('png: no IDAT chunk');
  if (!sawEnd) throw damaged('png: truncated before IEND');
}

/** fcTL: sequence number, width, height, x and y offsets (4 bytes each), delays, dispose and blend ops. */
function verifyFrameControl(bytes: Uint8Array, fcTL: PngChunk, image: Dimensions, isDefaultImage: boolean): void {
  if (fcTL.length !== 26) throw damaged(`png: fcTL length ${fcTL.length}`);
  const [width, height, x, y] = [4, 8, 12, 16].map((offset) => u32be(bytes, fcTL.data + offset));
  const frame = `${width}x${height} at ${x},${y}`;
  if (width === 0 || height === 0 || x + width > image.width || y + height > image.height) {
    throw damaged(`png: APNG frame ${frame} outside the ${image.width}x${image.height} image`);
  }
  if (isDefaultImage && (x !== 0 || y !== 0 || width !== image.width || height !== image.height)) {
    throw damaged(`png: APNG first frame ${frame} is not the ${image.width}x${image.height} default image`);
  }
}

/** A chunk with its length, type, data and correct CRC. */
export function pngChunk(type: string, data: ArrayLike<number> = []): Uint8Array {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  return chunk;
}
