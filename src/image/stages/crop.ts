import type { Region } from '../operations';
import type { RowSource } from './rows';
import type { RgbaImage } from '../types';

/**
 * The crop stage: only the rows and columns of `region` (in the source's coordinates, already
 * checked to lie inside it). Rows outside are read and dropped; whole-width regions pass the
 * source's band memory through without copying.
 */
export function cropRows(source: RowSource, region: Region): RowSource {
  const { x, y: top, width, height } = region;
  if (x === 0 && top === 0 && width === source.width && height === source.height) return source;
  const sourceStride = source.width * 4;
  const stride = width * 4;
  const wholeRows = x === 0 && width === source.width;
  let out: Uint8Array | null = null;
  let next = 0;
  return {
    width,
    height,
    model: source.model,
    alpha: source.alpha,
    grey: source.grey,
    async read() {
      while (next < height) {
        const band = await source.read();
        if (!band) throw new Error(`crop: the source ended before row ${top + height}`);
        const first = Math.max(band.y, top + next);
        const last = Math.min(band.y + band.rows, top + height);
        if (first >= last) continue;
        const rows = last - first;
        const y = first - top;
        next = y + rows;
        const from = (first - band.y) * sourceStride;
        if (wholeRows) return { y, rows, data: band.data.subarray(from, from + rows * stride) };
        if (!out || out.length < rows * stride) out = new Uint8Array(rows * stride);
        for (let row = 0, s = from + x * 4; row < rows; row++, s += sourceStride) out.set(band.data.subarray(s, s + stride), row * stride);
        return { y, rows, data: out.subarray(0, rows * stride) };
      }
      source.close();
      return null;
    },
    heldBytes: () => source.heldBytes() + (out ? out.byteLength : 0),
    close: () => source.close(),
  };
}
