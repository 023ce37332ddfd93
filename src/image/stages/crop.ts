import type { Region } from '../operations';
import type { RowSource } from './rows';
import type { RgbaImage } from '../types';

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
