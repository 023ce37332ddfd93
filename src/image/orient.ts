import type { Orientation } from './exif';
import { pixelWords } from './pixels';
import type { RgbaImage } from './types';


/** Edge of the square tiles used by the transposing orientations (5-8), for cache locality. */
const TILE = 64;

/**
 * Turns stored pixels into the pixels a viewer shows for the given EXIF orientation:
 * 1 as is, 2 mirror horizontal, 3 rotate 180, 4 mirror vertical, 5 transpose,
 * 6 rotate 90 CW, 7 transverse, 8 rotate 90 CCW. Orientations 5-8 swap width and height.
 *
 * Orientation 1 returns the input object itself (no copy); every other value returns a
 * new image. Pixels are moved as 32-bit words.
 */
export function applyOrientation(image: RgbaImage, orientation: Orientation | number): RgbaImage {
  if (orientation === 1) return image;
  if (!Number.isInteger(orientation) || orientation < 1 || orientation > 8) {
    throw new Error(`applyOrientation: invalid EXIF orientation ${orientation}`);
  }
  const { width: w, height: h, data } = image;
  if (data.length !== w * h * 4) {
    throw new Error(`applyOrientation: data length ${data.length} does not match ${w}x${h} RGBA`);
  }
  const src = pixelWords(data);
  const outBytes = new Uint8Array(w * h * 4);
  const dst = new Int32Array(outBytes.buffer);

  switch (orientation) {
    case 2: // mirror horizontal
      for (let y = 0; y < h; y++) {
        const row = y * w;
        for (let x = 0, d = row + w - 1; x < w; x++, d--) dst[d] = src[row + x];
      }
      return { data: outBytes, width: w, height: h };
    case 3: {
      // rotate 180: the word sequence reversed
      const n = w * h;
      for (let i = 0, d = n - 1; i < n; i++, d--) dst[d] = src[i];
      return { data: outBytes, width: w, height: h };
    }
    case 4: // mirror vertical: whole rows
      for (let y = 0; y < h; y++) dst.set(src.subarray(y * w, y * w + w), (h - 1 - y) * w);
      return { data: outBytes, width: w, height: h };
    // 5-8: the output is h wide and w high; source (x, y) goes to word base + x*dx + y*dy.
    case 5: // transpose: (x, y) -> (y, x)
      transposeLike(src, dst, w, h, 0, h, 1);
      break;
    case 6: // rotate 90 CW: (x, y) -> (h-1-y, x)
      transposeLike(src, dst, w, h, h - 1, h, -1);
      break;
    case 7: // transverse: (x, y) -> (h-1-y, w-1-x)
      transposeLike(src, dst, w, h, w * h - 1, -h, -1);
      break;
    case 8: // rotate 90 CCW: (x, y) -> (y, w-1-x)
      transposeLike(src, dst, w, h, (w - 1) * h, -h, 1);
      break;
  }
  return { data: outBytes, width: h, height: w };
}


function transposeLike(
  src: Int32Array,
  dst: Int32Array,
  w: number,
  h: number,
  base: number,
  dx: number,
  dy: number,
): void {
  for (let y0 = 0; y0 < h; y0 += TILE) {
    const y1 = Math.min(y0 + TILE, h);
    for (let x0 = 0; x0 < w; x0 += TILE) {
      const x1 = Math.min(x0 + TILE, w);
      for (let y = y0; y < y1; y++) {
        let s = y * w + x0;
        let d = base + x0 * dx + y * dy;
        for (let x = x0; x < x1; x++, s++, d += dx) dst[d] = src[s];
      }
    }
  }
}
