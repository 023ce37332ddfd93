import { AppError } from '../../../errors';
import { damaged, fourCC, need, startsWith, u16le, u24le, u32le, u8 } from '../../bytes';
import type { Dimensions } from '../../types';

export interface WebpChunk {
  type: string;
  /** Offset of the chunk header (FourCC). */
  start: number;
  /** Offset of the payload. */
  data: number;
  /** Payload length (without the pad byte). */
  length: number;
  /** Offset just after the payload and its pad byte (the RIFF end if the RIFF size leaves out the last pad). */
  end: number;
}

/** Offset just after the RIFF payload (trailing bytes after it are not part of the file). */
export function riffEnd(bytes: Uint8Array): number {
  if (!startsWith(bytes, 0, 'RIFF') || !startsWith(bytes, 8, 'WEBP')) throw damaged('webp: not RIFF/WEBP');
  const size = u32le(bytes, 4);
  if (size < 4) throw damaged(`webp: RIFF size ${size}`);
  return 8 + size;
}

/**
 * Walks the chunks of a RIFF/WEBP file. The RIFF size is trusted only as far as the bytes go:
 * chunks must lie inside both the RIFF payload and the file, otherwise `damaged` is thrown when the
 * walk reaches them. Lazy, so a header read of a truncated file can succeed before the damage.
 */
export function* webpChunks(bytes: Uint8Array): Generator<WebpChunk> {
  const end = riffEnd(bytes);
  let at = 12;
  while (at < end) {
    if (end - at < 8) throw damaged(`webp: ${end - at} stray bytes at ${at}`);
    const type = fourCC(bytes, at);
    const length = u32le(bytes, at + 4);
    if (length > end - at - 8) throw damaged(`webp: chunk ${JSON.stringify(type)} runs past the RIFF end`);
    const next = Math.min(at + 8 + length + (length & 1), end); // a RIFF size may leave out the last pad
    need(bytes, at + 8, next - at - 8, `webp: chunk ${JSON.stringify(type)}`);
    yield { type, start: at, data: at + 8, length, end: next };
    at = next;
  }
}

/**
 * Width and height from the first chunk: VP8X canvas (24-bit, +1), VP8L (14-bit, +1) or the VP8
 * key-frame header (14-bit). For a simple file only the header bytes are needed; a VP8X file is
 * checked further so that no bitstream can be larger than the canvas (`verifyExtendedFile`).
 */
export function readWebpDimensions(bytes: Uint8Array): Dimensions {
  const end = riffEnd(bytes);
  if (end < 20) throw damaged('webp: no chunk');
  const type = fourCC(bytes, 12);
  const length = u32le(bytes, 16);
  const at = 20;
  const dims = (() => {
    switch (type) {
      case 'VP8X':
        if (length < 10) throw damaged('webp: short VP8X');
        return { width: u24le(bytes, at + 4) + 1, height: u24le(bytes, at + 7) + 1 };
      case 'VP8L':
        return readVp8l(bytes, at, length);
      case 'VP8 ':
        return readVp8(bytes, at, length);
      default:
        throw damaged(`webp: first chunk ${JSON.stringify(type)}`);
    }
  })();
  if (dims.width * dims.height > 2 ** 32 - 1) throw damaged('webp: canvas area over 2^32');
  if (type === 'VP8X') verifyExtendedFile(bytes, dims);
  return dims;
}

const ANIMATION_FLAG = 0x02;

/**
 * A still VP8X file: its first VP8/VP8L bitstream must be exactly the canvas size (libwebp refuses a
 * mismatch too, but only after reading it). An ALPH chunk has no size of its own: its plane is the
 * bitstream's size. An animation: every ANMF frame must lie inside the canvas, as libwebp's demuxer
 * requires; only the first frame is decoded, and its bitstream is checked against its frame then
 * (webp-first-frame.ts). Damage after the first frame is left to that decode, which never reads it.
 */
function verifyExtendedFile(bytes: Uint8Array, canvas: Dimensions): void {
  if ((u8(bytes, 20) & ANIMATION_FLAG) !== 0) {
    verifyAnimationFrames(bytes, canvas);
    return;
  }
  for (const chunk of webpChunks(bytes)) {
    if (chunk.type === 'VP8 ' || chunk.type === 'VP8L') {
      const frame = chunk.type === 'VP8L' ? readVp8l(bytes, chunk.data, chunk.length) : readVp8(bytes, chunk.data, chunk.length);
      if (frame.width !== canvas.width || frame.height !== canvas.height) {
        throw damaged(`webp: ${chunk.type.trim()} bitstream is ${frame.width}x${frame.height} but the VP8X canvas ${canvas.width}x${canvas.height}`);
      }
      return;
    }
  }
  throw damaged('webp: VP8X file without a VP8 or VP8L bitstream');
}

function verifyAnimationFrames(bytes: Uint8Array, canvas: Dimensions): void {
  const chunks = webpChunks(bytes);
  let framesChecked = 0;
  for (;;) {
    let next: IteratorResult<WebpChunk>;
    try {
      next = chunks.next();
    } catch (error) {
      if (framesChecked > 0 && error instanceof AppError) return; // damage after the first frame
      throw error;
    }
    if (next.done) return;
    const chunk = next.value;
    if (chunk.type !== 'ANMF') continue;
    if (chunk.length < 16) throw damaged('webp: short ANMF');
    const [x, y] = [u24le(bytes, chunk.data) * 2, u24le(bytes, chunk.data + 3) * 2];
    const [width, height] = [u24le(bytes, chunk.data + 6) + 1, u24le(bytes, chunk.data + 9) + 1];
    if (x + width > canvas.width || y + height > canvas.height) {
      throw damaged(`webp: frame ${width}x${height} at ${x},${y} outside the ${canvas.width}x${canvas.height} canvas`);
    }
    framesChecked++;
  }
}

function readVp8l(bytes: Uint8Array, at: number, length: number): Dimensions {
  if (length < 5 || u8(bytes, at) !== 0x2f) throw damaged('webp: bad VP8L signature');
  need(bytes, at + 1, 4, 'webp: VP8L header');
  const bits = u32le(bytes, at + 1);
  if (bits >>> 29 !== 0) throw damaged('webp: VP8L version');
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

function readVp8(bytes: Uint8Array, at: number, length: number): Dimensions {
  if (length < 10) throw damaged('webp: short VP8');
  const frameTag = u24le(bytes, at);
  if (frameTag & 1) throw damaged('webp: VP8 is not a key frame');
  if (!startsWith(bytes, at + 3, [0x9d, 0x01, 0x2a])) throw damaged('webp: VP8 start code');
  const width = u16le(bytes, at + 6) & 0x3fff;
  const height = u16le(bytes, at + 8) & 0x3fff;
  if (width === 0 || height === 0) throw damaged(`webp: VP8 size ${width}x${height}`);
  return { width, height };
}

/** "RIFF" <size> "WEBP": the 12-byte file header for a body of `size - 4` bytes. */
export function riffHeader(size: number): Uint8Array {
  const header = new Uint8Array(12);
  header.set([0x52, 0x49, 0x46, 0x46], 0); // "RIFF"
  new DataView(header.buffer).setUint32(4, size, true);
  header.set([0x57, 0x45, 0x42, 0x50], 8); // "WEBP"
  return header;
}

/** A RIFF chunk with its header and, for an odd length, its pad byte. */
export function webpChunk(type: string, data: ArrayLike<number>): Uint8Array {
  const chunk = new Uint8Array(8 + data.length + (data.length & 1));
  for (let i = 0; i < 4; i++) chunk[i] = type.charCodeAt(i);
  new DataView(chunk.buffer).setUint32(4, data.length, true);
  chunk.set(data, 8);
  return chunk;
}

const ALPHA_FLAG = 0x10;

/**
 * A simple lossy file never has alpha; VP8L says so in its header (alpha_is_used); an extended file
 * in its VP8X flags, and an animation may leave transparent canvas around its first frame.
 */
export function webpMayHaveAlpha(bytes: Uint8Array): boolean {
  const type = fourCC(bytes, 12);
  if (type === 'VP8 ') return false;
  if (type === 'VP8L') return (u8(bytes, 24) & 0x10) !== 0;
  return (u8(bytes, 20) & (ALPHA_FLAG | ANIMATION_FLAG)) !== 0;
}
