import { damaged, fourCC, need, startsWith, u32le } from '../../bytes';

/** A chunk of a RIFF/WEBP file (or of an animation frame's payload, which is a chunk list too). */
export interface WebpChunk {
  type: string;
  /** Offset of the chunk header (FourCC). */
  start: number;
  /** Offset of the payload. */
  data: number;
  /** Payload length (without the pad byte). */
  length: number;
  /** Offset just after the payload and its pad byte (the list's end if the RIFF size leaves out the last pad). */
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
export function webpChunks(bytes: Uint8Array): Generator<WebpChunk> {
  return chunkList(bytes, 12, riffEnd(bytes));
}

/** The chunks in bytes [from, end), which lie inside the file or are damage. */
export function* chunkList(bytes: Uint8Array, from: number, end: number): Generator<WebpChunk> {
  let at = from;
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
