/** IHDR colour types (PNG spec, 11.2.2). */
export const GREY = 0;
export const RGB = 2;
export const PALETTE = 3;
export const GREY_ALPHA = 4;
export const RGBA = 6;

const CHANNELS: Record<number, number> = { [GREY]: 1, [RGB]: 3, [PALETTE]: 1, [GREY_ALPHA]: 2, [RGBA]: 4 };

/** The IHDR fields the pixel layout follows. */
export interface PixelLayout {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlaced: boolean;
}

type PixelFormat = Pick<PixelLayout, 'bitDepth' | 'colourType'>;

function channelCount(colourType: number): number {
  return CHANNELS[colourType];
}

/** Bits of one pixel as stored. */
function bitsPerPixel(png: PixelFormat): number {
  return png.bitDepth * channelCount(png.colourType);
}

/** Bytes of one row of `pixels` pixels, without its filter byte. */
export function rowBytes(png: PixelFormat, pixels: number): number {
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
export function passes(png: PixelLayout): Pass[] {
  const layout = png.interlaced ? ADAM7 : [[0, 0, 1, 1] as const];
  return layout.map(([x0, y0, dx, dy]) => {
    const width = png.width > x0 ? Math.ceil((png.width - x0) / dx) : 0;
    const height = png.height > y0 ? Math.ceil((png.height - y0) / dy) : 0;
    return { x0, y0, dx, dy, width, height };
  });
}
