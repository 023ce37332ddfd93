/**
 * Test-only row sources and readers for the band codecs (imported by *.test.ts only).
 */
import type { Region } from '../../src/image/operations';
import type { Band, RowSource } from '../../src/image/stages/rows';
import type { RgbaImage } from '../../src/image/types';

/** A `width` x `height` RGBA picture whose pixel at (x, y) is `pixel(x, y)`. */
export function pictureOf(width: number, height: number, pixel: (x: number, y: number) => readonly number[]): RgbaImage & { data: Uint8Array } {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * 4);
  return { data, width, height };
}

/**
 * `image` served in bands whose heights cycle through `heights` (e.g. [1, 7, 16] or [64]), each band
 * a fresh copy; `alpha` is the source's alpha trait.
 */
export function bandsOf(image: RgbaImage, heights: readonly number[], alpha = true): RowSource & { closed(): boolean } {
  const { width, height } = image;
  let y = 0;
  let index = 0;
  let closed = false;
  return {
    width,
    height,
    model: 'rgba',
    alpha,
    grey: false,
    async read(): Promise<Band | null> {
      if (y >= height) return null;
      const rows = Math.min(heights[index++ % heights.length], height - y);
      const band = { y, rows, data: Uint8Array.from(image.data.subarray(y * width * 4, (y + rows) * width * 4)) };
      y += rows;
      return band;
    },
    heldBytes: () => 0,
    close: () => {
      closed = true;
    },
    closed: () => closed,
  };
}

/** Reads `source` to its end, checking that its bands follow each other; returns the frame and the band heights. */
export async function readBands(source: RowSource): Promise<{ image: RgbaImage; heights: number[] }> {
  const { width, height } = source;
  const data = new Uint8Array(width * height * 4);
  const heights: number[] = [];
  let y = 0;
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      if (band.y !== y) throw new Error(`band at ${band.y}, expected ${y}`);
      data.set(band.data.subarray(0, band.rows * width * 4), y * width * 4);
      heights.push(band.rows);
      y += band.rows;
    }
  } finally {
    source.close();
  }
  if (y !== height) throw new Error(`source ended at row ${y} of ${height}`);
  return { image: { data, width, height }, heights };
}

/** The pixels of `image` inside a rectangle. */
export function cropImage(image: RgbaImage, x: number, y: number, width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let row = 0; row < height; row++) {
    const from = ((y + row) * image.width + x) * 4;
    data.set(image.data.subarray(from, from + width * 4), row * width * 4);
  }
  return { data, width, height };
}

const DEFAULT_BAND_ROWS = 16;

/**
 * Serves a decoded frame as bands (for codecs that decode whole frames). The frame is held until
 * the source is closed or its last band has been read.
 */
export function frameSource(
  image: RgbaImage,
  traits: { model?: RowSource['model']; alpha: boolean; grey?: boolean },
  onClose: () => void = () => {},
  bandRows = DEFAULT_BAND_ROWS,
): RowSource {
  const { width, height } = image;
  let data: Uint8Array | null = image.data instanceof Uint8Array ? image.data : new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  let y = 0;
  const close = () => {
    if (data === null) return;
    data = null;
    onClose();
  };
  return {
    width,
    height,
    model: traits.model ?? 'rgba',
    alpha: traits.alpha,
    grey: traits.grey ?? false,
    async read() {
      if (data === null || y >= height) {
        close();
        return null;
      }
      const rows = Math.min(bandRows, height - y);
      // A copy, so a consumer changing the band in place never changes the frame behind it.
      const band = { y, rows, data: data.slice(y * width * 4, (y + rows) * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => (data === null ? 0 : data.byteLength),
    close,
  };
}

/** Reads a source to its end into one frame (for tests and references); closes it. */
export async function collectFrame(source: RowSource): Promise<RgbaImage> {
  const { width, height } = source;
  const data = new Uint8Array(width * height * 4);
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      data.set(band.data.subarray(0, band.rows * width * 4), band.y * width * 4);
    }
  } finally {
    source.close();
  }
  return { data, width, height };
}

/**
 * Returns a new image holding exactly the pixels of `region`. Rows are copied whole
 * with `subarray`/`set`; there is no per-pixel loop.
 *
 * The caller validates the region against the image and reports `INVALID_PARAMETERS`;
 * this function only asserts (plain `Error`) so a bad region can never read outside the buffer.
 */
export function crop(image: RgbaImage, region: Region): RgbaImage {
  const { width: w, height: h, data } = image;
  const { x, y, width, height } = region;
  if (
    !Number.isSafeInteger(x) ||
    !Number.isSafeInteger(y) ||
    !Number.isSafeInteger(width) ||
    !Number.isSafeInteger(height) ||
    x < 0 ||
    y < 0 ||
    width < 1 ||
    height < 1 ||
    x + width > w ||
    y + height > h
  ) {
    throw new Error(`crop: region ${x},${y} ${width}x${height} is outside the ${w}x${h} image`);
  }
  if (data.length !== w * h * 4) throw new Error(`crop: data length ${data.length} does not match ${w}x${h} RGBA`);

  const src = data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.length);
  const srcStride = w * 4;
  const dstStride = width * 4;
  if (width === w) {
    // Whole rows: one contiguous block.
    return { data: src.slice(y * srcStride, (y + height) * srcStride), width, height };
  }
  const out = new Uint8Array(dstStride * height);
  let s = y * srcStride + x * 4;
  for (let row = 0, d = 0; row < height; row++, s += srcStride, d += dstStride) {
    out.set(src.subarray(s, s + dstStride), d);
  }
  return { data: out, width, height };
}
