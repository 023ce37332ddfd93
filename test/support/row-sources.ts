/**
 * Test-only row sources and readers for the band codecs (imported by *.test.ts only).
 */
import type { Band, RowSource } from '../../src/image/stages/rows';
import type { RgbaImage } from '../../src/image/types';

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
