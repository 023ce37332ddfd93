import type { Region } from './operations';
import type { RgbaImage } from './types';

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
