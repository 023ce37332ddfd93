import { BitReader, EntropyError, LOOKAHEAD } from './bit-reader';
import type { BitWriter } from './bit-writer';
import { extend, type DecodeTable, type EncodeTable } from './huffman';

/**
 * Reads a scan block by block (T.81 F.2.2): a block's DC difference, then its AC symbols, which
 * it moves past, counts, copies or writes in other codes. Each AC loop is libjpeg's decode_mcu,
 * taking a code and its additional bits in one step where the table's `whole` lookahead holds
 * them (nearly always), and symbol by symbol otherwise.
 *
 * These are methods, not module functions, for speed under vitest: its module runner turns each
 * call of an imported function into a getter call too, which per block is felt.
 */
export class BlockReader extends BitReader {
  /** A DC difference (T.81 F.2.2.1). */
  dc(table: DecodeTable): number {
    const entry = table.whole[this.peek()];
    if (entry !== 0) {
      this.skip(entry & 31);
      return entry >> 5;
    }
    const size = this.symbol(table);
    return size === 0 ? 0 : extend(this.bits(size), size);
  }

  /** Moves past a block's AC coefficients. */
  skipAc(table: DecodeTable): void {
    this.walkAc(table, null);
  }

  /** Counts a block's AC symbols into `frequencies` (indexed by symbol). */
  countAc(table: DecodeTable, frequencies: Int32Array): void {
    this.walkAc(table, frequencies);
  }

  private walkAc(table: DecodeTable, frequencies: Int32Array | null): void {
    let k = this.skipShortCodes(table, 1, frequencies);
    while (k > 0) {
      // A code longer than the lookahead: this symbol the slow way, then on.
      const symbol = this.symbol(table);
      this.bits(symbol & 15);
      if (frequencies) frequencies[symbol]++;
      const advance = advanceOf(symbol);
      if (advance === 0) return;
      k += advance;
      if (k === 64) return;
      if (k > 64) break;
      k = this.skipShortCodes(table, k, frequencies);
    }
    if (k !== 0) throw pastTheBlock();
  }

  /** Copies a block's AC coefficients to `writer` as they are coded (`codes`: the same table). */
  copyAc(table: DecodeTable, codes: EncodeTable, writer: BitWriter): void {
    const whole = table.whole;
    // Codes and their bits gather here, and go to the writer up to 24 bits at a time.
    let pending = 0;
    let pendingBits = 0;
    let k = 1;
    while (k < 64) {
      const entry = whole[this.peek()];
      let advance: number;
      if (entry !== 0) {
        const length = entry & 31;
        if (pendingBits + length > 24) {
          writer.write(pending, pendingBits);
          pending = pendingBits = 0;
        }
        pending = (pending << length) | this.bits(length);
        pendingBits += length;
        advance = (entry >> 5) & 31;
      } else {
        writer.write(pending, pendingBits);
        pending = pendingBits = 0;
        const symbol = this.symbol(table);
        advance = advanceOf(symbol);
        writer.write(codes.code[symbol], codes.length[symbol]);
        const size = symbol & 15;
        if (size !== 0) writer.write(this.bits(size), size);
      }
      if (advance === 0) break;
      k += advance;
    }
    writer.write(pending, pendingBits);
    if (k > 64) throw pastTheBlock();
  }

  /** Writes a block's AC symbols to `writer` in other codes (T.81 F.1.2.2); `recoded` maps the short ones. */
  recodeAc(table: DecodeTable, recoded: Recoding, codes: EncodeTable, writer: BitWriter): void {
    const { bits: newBits, lengths } = recoded;
    let k = 1;
    while (k < 64) {
      const index = this.peek();
      const entry = lengths[index];
      let advance: number;
      if (entry !== 0) {
        this.skip(entry & 31);
        const length = (entry >> 5) & 31;
        if (length <= 24) writer.write(newBits[index], length);
        else {
          writer.write(newBits[index] >>> 12, length - 12);
          writer.write(newBits[index] & 0xfff, 12);
        }
        advance = entry >> 10;
      } else {
        const symbol = this.symbol(table);
        const size = symbol & 15;
        writer.write(codes.code[symbol], codes.length[symbol]);
        if (size !== 0) writer.write(this.bits(size), size);
        advance = advanceOf(symbol);
      }
      if (advance === 0) return;
      k += advance;
    }
    if (k > 64) throw pastTheBlock();
  }

  /** Copies `count` bits of entropy-coded data as they are. */
  copyBits(writer: BitWriter, count: number): void {
    for (; count > 24; count -= 24) writer.write(this.bits(24), 24);
    writer.write(this.bits(count), count);
  }
}

/**
 * How far an AC symbol moves along the block (T.81 F.2.2.2): zero run + 1 for a coefficient, 16
 * for ZRL, 0 for EOB. libjpeg takes the symbols 0x10..0xE0 for an end of block; a sound encoder
 * never writes them, so they are refused, as are runs past the 64th coefficient.
 */
function advanceOf(symbol: number): number {
  if ((symbol & 15) !== 0) return (symbol >> 4) + 1;
  if (symbol === 0xf0) return 16;
  if (symbol === 0x00) return 0;
  throw new EntropyError(`AC symbol 0x${symbol.toString(16)}`);
}

const pastTheBlock = () => new EntropyError('a run past the end of the block');

/**
 * For `recodeAc`: indexed by the next 11 bits where `whole` has an entry, the new code with the
 * additional bits after it (`bits`), and bits read | bits written << 5 | advance << 10 (`lengths`).
 */
export interface Recoding {
  bits: Int32Array;
  lengths: Int32Array;
}

export function recoding(table: DecodeTable, codes: EncodeTable): Recoding {
  const bits = new Int32Array(table.whole.length);
  const lengths = new Int32Array(table.whole.length);
  table.whole.forEach((entry, index) => {
    if (entry === 0) return;
    const read = entry & 31;
    const symbol = entry >>> 10;
    const size = symbol & 15;
    const additional = (index >> (LOOKAHEAD - read)) & ((1 << size) - 1);
    bits[index] = (codes.code[symbol] << size) | additional;
    lengths[index] = read | ((codes.length[symbol] + size) << 5) | (((entry >> 5) & 31) << 10);
  });
  return { bits, lengths };
}
