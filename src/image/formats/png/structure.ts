import { damaged } from '../../bytes';
import { pngChunks, readPngDimensions } from './header';

/** IHDR colour types (PNG spec, 11.2.2). */
export const GREY = 0;
export const RGB = 2;
export const PALETTE = 3;
export const GREY_ALPHA = 4;
export const RGBA = 6;

const CHANNELS: Record<number, number> = { [GREY]: 1, [RGB]: 3, [PALETTE]: 1, [GREY_ALPHA]: 2, [RGBA]: 4 };

/** What decoding needs from a PNG's chunks: the header fields, the colour tables and the default image's data. */
export interface PngStructure {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlaced: boolean;
  /** PLTE as RGB triples (colour type 3 only; other types' suggested palettes are ignored). */
  palette: Uint8Array | null;
  /**
   * A usable tRNS: alphas of the first palette entries (type 3), or the one transparent sample
   * value per channel at the file's bit depth (types 0 and 2). Null when absent or ignored.
   */
  transparency: { paletteAlphas: Uint8Array } | { key: number[] } | null;
  /** The data of the first run of consecutive IDAT chunks: the default image (APNG fdAT are frames after it). */
  imageData: Uint8Array[];
}

export function channelCount(colourType: number): number {
  return CHANNELS[colourType];
}

/**
 * Reads the chunks decoding needs; the pipeline has already verified the signature, IHDR and every
 * CRC (verifyPngChunks). Ancillary chunks that break the rules are ignored as libpng ignores them
 * (a tRNS of the wrong length, after PLTE is missing, or on a type with alpha).
 */
export function readPngStructure(bytes: Uint8Array): PngStructure {
  const { width, height } = readPngDimensions(bytes);
  const chunks = pngChunks(bytes);
  const ihdr = chunks.next().value!;
  const [bitDepth, colourType, , , interlace] = bytes.subarray(ihdr.data + 8, ihdr.data + 13);
  let palette: Uint8Array | null = null;
  let transparencyData: Uint8Array | null = null;
  const imageData: Uint8Array[] = [];
  let inImageData = false;
  for (const chunk of chunks) {
    const data = bytes.subarray(chunk.data, chunk.data + chunk.length);
    if (chunk.type === 'IDAT') {
      inImageData = true;
      if (data.length > 0) imageData.push(data);
      continue;
    }
    if (inImageData || chunk.type === 'IEND') break;
    if (chunk.type === 'PLTE' && palette === null) palette = data;
    // libpng: tRNS for a palette image must follow PLTE ("out of place" otherwise, and ignored).
    if (chunk.type === 'tRNS' && transparencyData === null && (colourType !== PALETTE || palette !== null)) transparencyData = data;
  }
  if (colourType === PALETTE) {
    if (palette === null) throw damaged('png: palette image without PLTE');
    if (palette.length === 0 || palette.length % 3 !== 0 || palette.length > 768) throw damaged(`png: PLTE of ${palette.length} bytes`);
  }
  if (imageData.length === 0) throw damaged('png: no image data');
  return {
    width,
    height,
    bitDepth,
    colourType,
    interlaced: interlace === 1,
    palette: colourType === PALETTE ? palette : null,
    transparency: transparencyData && readTransparency(transparencyData, colourType, palette),
    imageData,
  };
}

function readTransparency(data: Uint8Array, colourType: number, palette: Uint8Array | null): PngStructure['transparency'] {
  if (colourType === PALETTE) {
    const entries = palette!.length / 3;
    return data.length === 0 || data.length > entries ? null : { paletteAlphas: data };
  }
  if (colourType === GREY && data.length === 2) return { key: [(data[0] << 8) | data[1]] };
  if (colourType === RGB && data.length === 6) return { key: [0, 2, 4].map((at) => (data[at] << 8) | data[at + 1]) };
  return null;
}

/** Bits of one pixel as stored. */
export function bitsPerPixel(png: Pick<PngStructure, 'bitDepth' | 'colourType'>): number {
  return png.bitDepth * channelCount(png.colourType);
}

/** Bytes of one row of `pixels` pixels, without its filter byte. */
export function rowBytes(png: Pick<PngStructure, 'bitDepth' | 'colourType'>, pixels: number): number {
  return Math.ceil((pixels * bitsPerPixel(png)) / 8);
}

/** One of the seven reduced images of Adam7, or the whole image when not interlaced. */
export interface Pass {
  /** Where the pass's first pixel lies in the image, and the steps between its pixels. */
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  /** Size of the reduced image (0 when the image is too small to have pixels in this pass). */
  width: number;
  height: number;
  /** Offset of the pass's first filter byte in the inflated data. */
  offset: number;
}

const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** The passes of the image in stream order: one for a plain image, seven for Adam7 (PNG spec, 8.2). */
export function passes(png: Pick<PngStructure, 'width' | 'height' | 'bitDepth' | 'colourType' | 'interlaced'>): Pass[] {
  const layout = png.interlaced ? ADAM7 : [[0, 0, 1, 1] as const];
  let offset = 0;
  return layout.map(([x0, y0, dx, dy]) => {
    const width = png.width > x0 ? Math.ceil((png.width - x0) / dx) : 0;
    const height = png.height > y0 ? Math.ceil((png.height - y0) / dy) : 0;
    const pass = { x0, y0, dx, dy, width, height, offset };
    // An empty pass has no rows and no filter bytes.
    if (width > 0) offset += height * (1 + rowBytes(png, width));
    return pass;
  });
}

/** Inflated bytes of the whole image: every pass's rows with their filter bytes. */
export function inflatedBytes(png: Parameters<typeof passes>[0]): number {
  const all = passes(png);
  const last = all[all.length - 1];
  return last.offset + (last.width > 0 ? last.height * (1 + rowBytes(png, last.width)) : 0);
}
