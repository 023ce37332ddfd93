import type { EncodeTable } from './huffman';

/**
 * Writes a JPEG: marker segments as bytes, entropy-coded data as bits, most significant first, with
 * a 0x00 stuffed after every 0xFF byte (T.81 B.1.1.5). The buffer grows as needed.
 */
export class BitWriter {
  private bytes: Uint8Array;
  private at = 0;
  /** Pending bits: the low `bitCount` (0..7 between calls) bits of `buffer`. */
  private buffer = 0;
  private bitCount = 0;

  constructor(expectedBytes: number) {
    this.bytes = new Uint8Array(Math.max(1024, Math.ceil(expectedBytes)));
  }

  private reserve(extra: number): void {
    if (this.at + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + extra));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
  }

  /** Appends bytes (markers and segments; only between entropy-coded runs). */
  append(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Appends the low `count` bits of `value` (count 0..24). */
  write(value: number, count: number): void {
    let bitCount = this.bitCount + count;
    const buffer = (this.buffer << count) | value;
    if (bitCount >= 8) {
      this.reserve(8);
      const bytes = this.bytes;
      let at = this.at;
      do {
        bitCount -= 8;
        const byte = (buffer >>> bitCount) & 0xff;
        bytes[at++] = byte;
        if (byte === 0xff) bytes[at++] = 0;
      } while (bitCount >= 8);
      this.at = at;
    }
    this.buffer = buffer & ((1 << bitCount) - 1);
    this.bitCount = bitCount;
  }

  /** Writes a DC difference (T.81 F.1.2.1): its category's code, then the value in that many bits. */
  writeDc(table: EncodeTable, diff: number): void {
    const size = category(diff);
    this.write(table.code[size], table.length[size]);
    // A negative difference is written as diff - 1 (F.1.2.1.1), i.e. its low bits.
    if (size !== 0) this.write((diff < 0 ? diff - 1 : diff) & ((1 << size) - 1), size);
  }

  /** Ends entropy-coded data: the last byte is padded with 1 bits (T.81 F.1.2.3). */
  padToByte(): void {
    if (this.bitCount > 0) this.write((1 << (8 - this.bitCount)) - 1, 8 - this.bitCount);
  }

  /** The bytes written, in an array of their own. */
  finish(): Uint8Array {
    return this.bytes.slice(0, this.at);
  }
}

/** The size category of a DC difference (T.81 F.1.2.1.1, table F.1): its bit count. */
export function category(value: number): number {
  return 32 - Math.clz32(value < 0 ? -value : value);
}
