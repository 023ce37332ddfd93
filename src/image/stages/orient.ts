import type { Orientation } from '../exif';
import type { Region } from '../operations';
import { OrientedFrame } from './oriented-frame';
import { pixelWords } from './pixels';
import { forward, type RowSource } from './rows';
import type { Dimensions, RgbaImage } from '../types';


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

/**
 * The orientation stage: the source's rows as a viewer sees them. 1 passes through and 2 mirrors
 * each band; the others need all stored rows before the first displayed row can be written, so
 * they fill an OrientedFrame (most compact form) and then serve it as bands.
 */
export function orientRows(source: RowSource, orientation: Orientation | number): RowSource {
  if (orientation === 1) return source;
  if (orientation === 2) {
    return {
      ...forward(source),
      async read() {
        const band = await source.read();
        if (band) mirrorRows(pixelWords(band.data), source.width, band.rows);
        return band;
      },
    };
  }
  const frame = new OrientedFrame(source, orientation, source);
  const out = new Uint8Array(BAND_ROWS * frame.width * 4);
  let filled = false;
  let y = 0;
  return {
    width: frame.width,
    height: frame.height,
    model: source.model,
    alpha: source.alpha,
    grey: source.grey,
    async read() {
      if (!filled) {
        for (let band = await source.read(); band; band = await source.read()) frame.place(band.data, band.y, band.rows);
        filled = true;
      }
      if (y >= frame.height) return null;
      const rows = Math.min(BAND_ROWS, frame.height - y);
      frame.readRows(y, rows, out);
      const band = { y, rows, data: out.subarray(0, rows * frame.width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => (filled ? 0 : source.heldBytes()) + frame.bytes.byteLength + out.byteLength,
    close: () => source.close(),
  };
}

const BAND_ROWS = 16;

function mirrorRows(words: Int32Array, width: number, rows: number): void {
  for (let row = 0; row < rows; row++) {
    for (let a = row * width, b = a + width - 1; a < b; a++, b--) {
      const t = words[a];
      words[a] = words[b];
      words[b] = t;
    }
  }
}

/** The stored-coordinates rectangle that a displayed region (after orientation) comes from. */
export function storedRegion(region: Region, orientation: Orientation | number, stored: Dimensions): Region {
  const { x, y, width, height } = region;
  const { width: w, height: h } = stored;
  switch (orientation) {
    case 2: return { x: w - x - width, y, width, height };
    case 3: return { x: w - x - width, y: h - y - height, width, height };
    case 4: return { x, y: h - y - height, width, height };
    case 5: return { x: y, y: x, width: height, height: width };
    case 6: return { x: y, y: h - x - width, width: height, height: width };
    case 7: return { x: w - y - height, y: h - x - width, width: height, height: width };
    case 8: return { x: w - y - height, y: x, width: height, height: width };
    default: return region;
  }
}

/**
 * The eight orientations as matrices on centred coordinates (x right, y down): a stored pixel at
 * (x, y) is shown at (a x + b y, c x + d y). 6 turns clockwise, 8 counter-clockwise.
 */
const MATRICES: Record<Orientation, readonly [number, number, number, number]> = {
  1: [1, 0, 0, 1],
  2: [-1, 0, 0, 1],
  3: [-1, 0, 0, -1],
  4: [1, 0, 0, -1],
  5: [0, 1, 1, 0],
  6: [0, -1, 1, 0],
  7: [0, -1, -1, 0],
  8: [0, 1, -1, 0],
};

/**
 * The orientation that shows stored pixels as `turn` shows the picture `orientation` shows: a
 * rotate or flip step after the file's EXIF orientation (and the steps before it) is one more
 * orientation of the stored pixels, applied once at the end by the orientation machinery.
 */
export function turned(orientation: Orientation, turn: Orientation): Orientation {
  const [a, b, c, d] = MATRICES[turn];
  const [e, f, g, h] = MATRICES[orientation];
  const product = [a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h];
  const found = (Object.keys(MATRICES) as unknown as Orientation[]).find((o) => MATRICES[o].every((v, i) => v === product[i]));
  return Number(found) as Orientation;
}

/** A picture's size as shown with `orientation`: 5-8 swap width and height. */
export function displayedSize(stored: Dimensions, orientation: number): Dimensions {
  return orientation >= 5 ? { width: stored.height, height: stored.width } : stored;
}
