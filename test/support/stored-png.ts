import { adler32, CRC_START, crcUpdate, crcValue } from '../../src/image/formats/png/crc';

/*
 * Large PNG inputs made cheaply in a test: the image data is zlib with stored (uncompressed)
 * blocks, so a 45 MB file takes a copy and two checksums instead of a deflate, and its pixels are
 * whatever `pixel` says (noise keeps the re-encoded result as large as the input).
 */

const STORED_BLOCK_BYTES = 65_535;

export interface StoredPngOptions {
  width: number;
  height: number;
  /** Fills one RGB row (3 bytes a pixel). */
  row: (y: number, rgb: Uint8Array) => void;
  /** Damage the image data from this filtered-data offset on with a reserved deflate block type. */
  damageAt?: number;
}

/** An 8-bit RGB PNG of stored deflate blocks (checksums right, so only the decoder can find the damage). */
export function storedPng({ width, height, row, damageAt }: StoredPngOptions): Uint8Array {
  const rowBytes = 1 + width * 3;
  const filtered = new Uint8Array(rowBytes * height);
  for (let y = 0; y < height; y++) row(y, filtered.subarray(y * rowBytes + 1, (y + 1) * rowBytes));
  const dataEnd = damageAt ?? filtered.length;
  const blocks = Math.ceil(dataEnd / STORED_BLOCK_BYTES);
  const zlib = new Uint8Array(2 + blocks * 5 + dataEnd + (damageAt === undefined ? 4 : 1));
  zlib.set([0x78, 0x01]);
  let at = 2;
  for (let from = 0; from < dataEnd; from += STORED_BLOCK_BYTES) {
    const length = Math.min(STORED_BLOCK_BYTES, dataEnd - from);
    const final = damageAt === undefined && from + length === dataEnd ? 1 : 0;
    zlib.set([final, length & 0xff, length >>> 8, ~length & 0xff, (~length >>> 8) & 0xff], at);
    zlib.set(filtered.subarray(from, from + length), at + 5);
    at += 5 + length;
  }
  if (damageAt === undefined) new DataView(zlib.buffer).setUint32(at, adler32(filtered));
  else zlib[at] = 0b110; // BTYPE 11: reserved, an error once inflate reaches it
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const chunks = [chunk('IHDR', ihdr), ...idatChunks(zlib), chunk('IEND', new Uint8Array(0))];
  const file = new Uint8Array(8 + chunks.reduce((sum, part) => sum + part.length, 0));
  file.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let offset = 8;
  for (const part of chunks) {
    file.set(part, offset);
    offset += part.length;
  }
  return file;
}

/** Noise rows from a seed (xorshift32): incompressible, and the same every run. */
export function noiseRows(seed = 1): (y: number, rgb: Uint8Array) => void {
  let state = seed >>> 0 || 1;
  let words = new Uint32Array(0);
  return (_y, rgb) => {
    if (words.length * 4 < rgb.length) words = new Uint32Array(Math.ceil(rgb.length / 4));
    for (let i = 0; i < words.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      words[i] = state;
    }
    rgb.set(new Uint8Array(words.buffer, 0, rgb.length));
  };
}

function idatChunks(zlib: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < zlib.length; at += 1 << 20) chunks.push(chunk('IDAT', zlib.subarray(at, at + (1 << 20))));
  return chunks;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crcValue(crcUpdate(CRC_START, out, 4, 8 + data.length)));
  return out;
}

