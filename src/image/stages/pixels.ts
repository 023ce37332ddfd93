/**
 * The RGBA pixels as one 32-bit word each, without copying when the bytes are aligned.
 * Byte order is little-endian (R in the low byte) on every platform Workers and Node run on.
 */
export function pixelWords(data: Uint8Array | Uint8ClampedArray): Int32Array {
  if (data.byteOffset % 4 === 0) return new Int32Array(data.buffer, data.byteOffset, data.length >>> 2);
  return new Int32Array(new Uint8Array(data).buffer);
}

/** A channel value rounded and clamped to 0..255. */
export const toByte = (value: number): number => (value <= 0 ? 0 : value >= 255 ? 255 : Math.round(value));

/** The alpha byte of an opaque pixel word. */
export const ALPHA_255 = 255 << 24;
