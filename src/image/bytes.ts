import { AppError } from '../errors';

/**
 * Bounds-checked big/little-endian readers for untrusted container bytes. Every reader throws
 * `damaged()` instead of reading past the end, so parsers never see `undefined` or a RangeError.
 */

const DAMAGED_MESSAGE = 'The file is damaged or is not a supported image (JPEG, PNG, WebP or AVIF).';

/** The one error for unknown, truncated or corrupt containers; `detail` is for logs only. */
export function damaged(detail: string): AppError {
  return new AppError('UNSUPPORTED_FORMAT', DAMAGED_MESSAGE, detail);
}

/** Throws `damaged` unless bytes [offset, offset + length) lie inside `bytes`. */
export function need(bytes: Uint8Array, offset: number, length: number, what: string): void {
  if (!(offset >= 0 && length >= 0 && offset + length <= bytes.length)) {
    throw damaged(`${what}: needs ${length} bytes at ${offset}, file has ${bytes.length}`);
  }
}

export function u8(b: Uint8Array, o: number): number {
  need(b, o, 1, 'u8');
  return b[o];
}

export function u16be(b: Uint8Array, o: number): number {
  need(b, o, 2, 'u16be');
  return (b[o] << 8) | b[o + 1];
}

export function u16le(b: Uint8Array, o: number): number {
  need(b, o, 2, 'u16le');
  return b[o] | (b[o + 1] << 8);
}

export function u24le(b: Uint8Array, o: number): number {
  need(b, o, 3, 'u24le');
  return b[o] | (b[o + 1] << 8) | (b[o + 2] << 16);
}

export function u32be(b: Uint8Array, o: number): number {
  need(b, o, 4, 'u32be');
  return b[o] * 0x1000000 + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]);
}

export function u32le(b: Uint8Array, o: number): number {
  need(b, o, 4, 'u32le');
  return b[o + 3] * 0x1000000 + ((b[o + 2] << 16) | (b[o + 1] << 8) | b[o]);
}

/** Four bytes as Latin-1 text (chunk and box types); throws `damaged` if out of range. */
export function fourCC(b: Uint8Array, o: number): string {
  need(b, o, 4, 'fourCC');
  return String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);
}

/** True if `bytes` holds exactly `expected` at `offset` (false, not an error, when too short). */
export function startsWith(bytes: Uint8Array, offset: number, expected: ArrayLike<number> | string): boolean {
  const length = expected.length;
  if (offset < 0 || offset + length > bytes.length) return false;
  for (let i = 0; i < length; i++) {
    const want = typeof expected === 'string' ? expected.charCodeAt(i) : expected[i];
    if (bytes[offset + i] !== want) return false;
  }
  return true;
}

/** Joins parts into one new array (the strip functions build their output this way). */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
