/**
 * CRC-32 as PNG chunks use it, computed as bytes arrive. Slicing-by-8 (eight 256-entry tables,
 * eight bytes a step): the encoder checksums every output byte, and the one-table loop of
 * header/png.ts would take ~100 ms of a 12 MP encode.
 */
const TABLES = (() => {
  const tables = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    tables[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 8; t++) {
      const previous = tables[(t - 1) * 256 + n];
      tables[t * 256 + n] = (previous >>> 8) ^ tables[previous & 0xff];
    }
  }
  return tables;
})();

export const CRC_START = 0xffffffff | 0;

/** Continues `crc` (CRC_START at first) over data[from, to); `crcValue` gives the checksum. */
export function crcUpdate(crc: number, data: Uint8Array, from = 0, to = data.length): number {
  const t = TABLES;
  let c = crc;
  let i = from;
  for (; i + 8 <= to; i += 8) {
    const low = c ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24));
    c =
      t[1792 + (low & 0xff)] ^
      t[1536 + ((low >>> 8) & 0xff)] ^
      t[1280 + ((low >>> 16) & 0xff)] ^
      t[1024 + (low >>> 24)] ^
      t[768 + data[i + 4]] ^
      t[512 + data[i + 5]] ^
      t[256 + data[i + 6]] ^
      t[data[i + 7]];
  }
  for (; i < to; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return c;
}

export function crcValue(crc: number): number {
  return (crc ^ 0xffffffff) >>> 0;
}

/** Adler-32 (RFC 1950), the checksum that ends a zlib stream. */
export function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  // 5552 bytes is the most that can be summed before b could pass 2^32 (zlib's NMAX).
  for (let at = 0; at < data.length; ) {
    const end = Math.min(data.length, at + 5552);
    for (; at < end; at++) {
      a += data[at];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}
