import { damaged, fourCC, need, u32be, startsWith } from '../../bytes';
import { PNG_SIGNATURE } from '../../sniff';
import type { Dimensions } from '../../types';
import { CRC_START, crcUpdate, crcValue } from './crc';

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
export function* pngChunks(bytes: Uint8Array): Generator<PngChunk> {
  if (!startsWith(bytes, 0, PNG_SIGNATURE)) throw damaged('png: bad signature');
  let at: number = PNG_SIGNATURE.length;
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

/** Width and height from IHDR, which must be the first chunk, with its fields and CRC checked. */
export function readPngDimensions(bytes: Uint8Array): Dimensions {
  const first = pngChunks(bytes).next();
  if (first.done || first.value.type !== 'IHDR' || first.value.length !== 13) {
    throw damaged('png: IHDR is not the first chunk');
  }
  const at = first.value.data;
  const width = u32be(bytes, at);
  const height = u32be(bytes, at + 4);
  const [depth, colourType, compression, filter, interlace] = bytes.subarray(at + 8, at + 13);
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    throw damaged(`png: IHDR size ${width}x${height}`);
  }
  if (!BIT_DEPTHS[colourType]?.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1) {
    throw damaged(`png: IHDR fields depth=${depth} colour=${colourType} ${compression}/${filter}/${interlace}`);
  }
  if (crc32(bytes.subarray(at - 4, at + 13)) !== u32be(bytes, at + 13)) throw damaged('png: IHDR CRC');
  return { width, height };
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
export function verifyPngChunks(bytes: Uint8Array): void {
  const image = readPngDimensions(bytes);
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

/** Colour types with alpha (4, 6), or a tRNS chunk before the image data. */
export function pngMayHaveAlpha(bytes: Uint8Array): boolean {
  for (const chunk of pngChunks(bytes)) {
    if (chunk.type === 'IHDR') {
      const colourType = bytes[chunk.data + 9];
      if (colourType === 4 || colourType === 6) return true;
    }
    if (chunk.type === 'tRNS') return true;
    if (chunk.type === 'IDAT') return false;
  }
  return false;
}
