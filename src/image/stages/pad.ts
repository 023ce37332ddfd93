import type { Colour, Region } from '../operations';
import { BAND_ROWS_MAX, type RowSource } from './rows';
import type { Dimensions } from '../types';

/** Bands of background-only rows above and below the picture. */
const BAND_ROWS = 16;

/**
 * The pad stage (fit=contain): the source placed at `at` in a `box` filled with `background`,
 * streamed: rows above and below are background only, rows beside the picture get background
 * columns. A background with alpha below 255 makes the result carry alpha.
 */
export function padRows(source: RowSource, box: Dimensions, at: Region, background: Colour): RowSource {
  if (at.width !== source.width || at.height !== source.height) throw new Error('pad: the picture does not match its place in the box');
  const stride = box.width * 4;
  const { r, g, b, a } = background;
  const fill = (r | (g << 8) | (b << 16) | (a << 24)) >>> 0;
  let out: Uint8Array | null = null;
  let words: Uint32Array | null = null;
  let y = 0;
  const buffer = (rows: number) => {
    if (!out || out.length < rows * stride) {
      out = new Uint8Array(Math.min(BAND_ROWS_MAX, Math.max(rows, BAND_ROWS)) * stride);
      words = new Uint32Array(out.buffer);
    }
    return { bytes: out, words: words! };
  };
  const backgroundBand = (rows: number) => {
    const { bytes, words } = buffer(rows);
    words.fill(fill, 0, rows * box.width);
    const band = { y, rows, data: bytes.subarray(0, rows * stride) };
    y += rows;
    return band;
  };
  return {
    width: box.width,
    height: box.height,
    model: source.model,
    alpha: source.alpha || a < 255,
    grey: source.grey && r === g && g === b,
    async read() {
      if (y < at.y) return backgroundBand(Math.min(BAND_ROWS, at.y - y));
      if (y < at.y + at.height) {
        const band = await source.read();
        if (!band) throw new Error(`pad: the source ended before its ${source.height} rows`);
        const { bytes, words } = buffer(band.rows);
        for (let row = 0; row < band.rows; row++) {
          const start = row * box.width;
          words.fill(fill, start, start + at.x);
          bytes.set(band.data.subarray(row * at.width * 4, (row + 1) * at.width * 4), (start + at.x) * 4);
          words.fill(fill, start + at.x + at.width, start + box.width);
        }
        const padded = { y, rows: band.rows, data: bytes.subarray(0, band.rows * stride) };
        y += band.rows;
        return padded;
      }
      if (y < box.height) return backgroundBand(Math.min(BAND_ROWS, box.height - y));
      source.close();
      return null;
    },
    heldBytes: () => source.heldBytes() + (out ? out.byteLength : 0),
    close: () => source.close(),
  };
}
