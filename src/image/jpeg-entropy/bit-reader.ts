import type { DecodeTable } from './huffman';

/**
 * Bits looked at in one step when decoding (the tables of huffman.ts are indexed by them); longer
 * codes take the canonical-code path. Defined here, beside the per-symbol code that reads it:
 * vitest's module runner turns an imported binding into a getter call, which in this loop made
 * the planning three times slower.
 */
export const LOOKAHEAD = 11;

/** Entropy-coded data that is not what a sound file holds: the caller gives up on the file. */
export class EntropyError extends Error {
  override name = 'EntropyError';
}

/** Numbers in a saved reader state (`save`, `restore`). */
export const READER_STATE_SIZE = 6;

/**
 * Reads the bits of entropy-coded data (T.81 F.2.2.5), undoing 0xFF00 byte stuffing (B.1.1.5). At a
 * marker, or the end of the bytes, it feeds zero bits as libjpeg does; `overran` tells when any of
 * them were consumed, which for us means the data is damaged.
 */
export class BitReader {
  /** The unread bits are the low `bitCount` bits of `buffer`. */
  private buffer = 0;
  private bitCount = 0;
  /** How many of the buffered bits are zero fill past the data. */
  private fillBits = 0;
  /** Next byte to read. */
  private at: number;
  /** Stopped at a marker (or the end): only zero fill follows. */
  private stopped = false;
  /** Bits put into the buffer so far. */
  private loaded = 0;

  constructor(
    private readonly data: Uint8Array,
    start: number,
  ) {
    this.at = start;
  }

  /** True once bits past the data (zero fill after a marker or the end) have been consumed. */
  get overran(): boolean {
    return this.bitCount < this.fillBits;
  }

  /** Tops the buffer up to 25..32 bits. */
  private fill(): void {
    const data = this.data;
    let { buffer, bitCount, at } = this;
    while (bitCount <= 24) {
      if (this.stopped) {
        buffer <<= 8;
        this.fillBits += 8;
      } else if (at < data.length && data[at] !== 0xff) {
        buffer = (buffer << 8) | data[at++];
      } else if (at + 1 < data.length && data[at + 1] === 0x00) {
        buffer = (buffer << 8) | 0xff;
        at += 2;
      } else {
        // A marker (or a fill byte before one), or the end: the data stops here.
        this.stopped = true;
        continue;
      }
      bitCount += 8;
    }
    this.loaded += bitCount - this.bitCount;
    this.buffer = buffer;
    this.bitCount = bitCount;
    this.at = at;
  }

  /** Bits consumed so far: the difference of two positions is the length of the data between them. */
  get position(): number {
    return this.loaded - this.bitCount;
  }

  /** `count` bits (0..24) as an unsigned number. */
  bits(count: number): number {
    if (this.bitCount < count) this.fill();
    this.bitCount -= count;
    return (this.buffer >>> this.bitCount) & ((1 << count) - 1);
  }

  /** The next LOOKAHEAD (11) bits, without consuming them. */
  peek(): number {
    if (this.bitCount < 16) this.fill();
    return (this.buffer >>> (this.bitCount - LOOKAHEAD)) & ((1 << LOOKAHEAD) - 1);
  }

  /**
   * Moves past a block's AC symbols from coefficient `k` on, while `table.whole` holds their codes
   * (DecodeTable), counting them into `frequencies` if given: `skipAc` and `countAc` with the
   * reader's state in local variables, which takes a fifth off the time of planning. Returns 0 at
   * the end of the block, -1 for a run past it, or the coefficient where a longer code stopped it.
   */
  skipShortCodes(table: DecodeTable, k: number, frequencies: Int32Array | null): number {
    const data = this.data;
    const whole = table.whole;
    let buffer = this.buffer;
    let bitCount = this.bitCount;
    let at = this.at;
    let loaded = 0;
    for (;;) {
      if (bitCount < 16) {
        while (bitCount <= 24 && at < data.length && data[at] !== 0xff && !this.stopped) {
          buffer = (buffer << 8) | data[at++];
          bitCount += 8;
          loaded += 8;
        }
        if (bitCount < 16) {
          // A stuffed 0xFF, a marker or the end: fill() knows what to do.
          this.buffer = buffer;
          this.bitCount = bitCount;
          this.at = at;
          this.fill();
          buffer = this.buffer;
          bitCount = this.bitCount;
          at = this.at;
        }
      }
      const entry = whole[(buffer >>> (bitCount - LOOKAHEAD)) & ((1 << LOOKAHEAD) - 1)];
      if (entry === 0) break;
      bitCount -= entry & 31;
      if (frequencies) frequencies[entry >>> 10]++;
      const advance = (entry >> 5) & 31;
      k += advance;
      if (advance === 0 || k === 64) {
        k = 0;
        break;
      }
      if (k > 64) {
        k = -1;
        break;
      }
    }
    this.buffer = buffer;
    this.bitCount = bitCount;
    this.at = at;
    this.loaded += loaded;
    return k;
  }

  /** Consumes `count` bits that `peek` has seen. */
  skip(count: number): void {
    this.bitCount -= count;
  }

  /** One Huffman-coded symbol (T.81 F.2.2.3, looking at 11 bits at once for the short codes). */
  symbol(table: DecodeTable): number {
    const entry = table.fast[this.peek()];
    if (entry !== 0) {
      this.bitCount -= entry >> 8;
      return entry & 0xff;
    }
    for (let length = LOOKAHEAD + 1; length <= 16; length++) {
      const code = (this.buffer >>> (this.bitCount - length)) & ((1 << length) - 1);
      if (code <= table.maxCode[length]) {
        this.bitCount -= length;
        return table.symbols[code + table.valueOffset[length]];
      }
    }
    throw new EntropyError('a bit pattern that is no Huffman code');
  }

  /**
   * Moves past the restart marker RSTn that must come next (T.81 F.2.2.5 and F.1.2.3): the bits
   * left in the current byte are padding, and nothing else may stand before the marker (libjpeg
   * would skip stray bytes, with a warning; we take them as damage).
   */
  restart(n: number): void {
    if (this.bitCount - this.fillBits >= 8) throw new EntropyError('data before a restart marker');
    const data = this.data;
    let at = this.at;
    if (data[at] !== 0xff) throw new EntropyError('no restart marker where one is due');
    while (data[at] === 0xff) at++; // fill bytes (B.1.1.2)
    if (data[at] !== 0xd0 + n) throw new EntropyError(`expected RST${n}`);
    this.at = at + 1;
    this.buffer = 0;
    this.bitCount = 0;
    this.fillBits = 0;
    this.stopped = false;
  }

  /**
   * Offset of the marker that follows the data, past any restart markers and stray bytes (which
   * libjpeg skips after the last MCU), or -1 if the bytes end first.
   */
  markerAfterData(): number {
    const data = this.data;
    for (let at = this.at; at + 1 < data.length; at++) {
      if (data[at] !== 0xff) continue;
      const next = data[at + 1];
      if (next === 0x00 || next === 0xff || (next >= 0xd0 && next <= 0xd7)) continue;
      return at;
    }
    return -1;
  }

  /** Saves the state at `into[at]` onwards, to go on reading from here later. */
  save(into: Float64Array, at: number): void {
    into[at] = this.at;
    into[at + 1] = this.buffer;
    into[at + 2] = this.bitCount;
    into[at + 3] = this.fillBits;
    into[at + 4] = this.stopped ? 1 : 0;
    into[at + 5] = this.loaded;
  }

  restore(from: Float64Array, at: number): void {
    this.at = from[at];
    this.buffer = from[at + 1];
    this.bitCount = from[at + 2];
    this.fillBits = from[at + 3];
    this.stopped = from[at + 4] === 1;
    this.loaded = from[at + 5];
  }
}

/** `position` of a state saved at `state[at]`. */
export function savedPosition(state: Float64Array, at: number): number {
  return state[at + 5] - state[at + 2];
}
