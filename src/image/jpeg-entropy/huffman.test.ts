import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BitReader } from './bit-reader';
import { BitWriter } from './bit-writer';
import { AC, DC, decodeTable, encodeTable, EVERY_DC_CATEGORY, optimalSpec, withExtraSymbols, type HuffmanSpec } from './huffman';

function spec(counts: Record<number, number>, symbols: number[]): HuffmanSpec {
  const table = new Uint8Array(17);
  for (const [length, count] of Object.entries(counts)) table[Number(length)] = count;
  return { counts: table, symbols: Uint8Array.from(symbols) };
}

/** Writes `symbols` with `table` and reads them back with its decoding form. */
function roundTrip(table: HuffmanSpec, tableClass: number, symbols: number[]): number[] {
  const codes = encodeTable(table, tableClass)!;
  const writer = new BitWriter(16);
  for (const s of symbols) writer.write(codes.code[s], codes.length[s]);
  writer.padToByte();
  const reader = new BitReader(writer.finish(), 0);
  const decoding = decodeTable(table, tableClass)!;
  return symbols.map(() => reader.symbol(decoding));
}

describe('Huffman tables', () => {
  it('decode what they encode, short codes and long ones', () => {
    const symbols = [...EVERY_DC_CATEGORY.symbols];
    const both = [...symbols, ...symbols.slice().reverse()];
    expect(roundTrip(EVERY_DC_CATEGORY, DC, both)).toEqual(both);
    // 200 AC symbols, codes of 1 to 16 bits.
    const ac = optimalSpec(Array.from({ length: 256 }, (_, s) => (s < 200 ? Math.round(1e6 / (s + 1) ** 2) + 1 : 0)));
    expect(ac.counts.some((n, length) => length > 11 && n > 0)).toBe(true);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 199 }), { maxLength: 300 }), (input) => {
        expect(roundTrip(ac, AC, input)).toEqual(input);
      }),
    );
  });

  it('are refused where libjpeg refuses them: an all-ones code, a DC category over 15, a count that does not add up', () => {
    expect(decodeTable(spec({ 1: 2 }, [0, 1]), AC)).toBeNull(); // codes 0 and 1: 1 is all ones
    expect(decodeTable(spec({ 1: 1, 2: 1 }, [0, 1]), AC)).not.toBeNull(); // 0 and 10
    expect(decodeTable(spec({ 2: 3 }, [0, 1, 2]), AC)).not.toBeNull(); // 00 01 10
    expect(decodeTable(spec({ 2: 4 }, [0, 1, 2, 3]), AC)).toBeNull();
    expect(decodeTable(spec({ 1: 1, 2: 1 }, [0, 16]), DC)).toBeNull();
    expect(decodeTable(spec({ 1: 1, 2: 1 }, [0, 16]), AC)).not.toBeNull();
    expect(decodeTable(spec({ 2: 2 }, [0]), AC)).toBeNull();
  });

  it('optimal tables: codes of at most 16 bits, never all ones, the frequent symbols shortest', () => {
    // Fibonacci frequencies make the deepest Huffman trees: 40 symbols would need 39-bit codes.
    const fibonacci = [1, 1];
    while (fibonacci.length < 40) fibonacci.push(fibonacci.at(-1)! + fibonacci.at(-2)!);
    const table = optimalSpec(fibonacci);
    expect(table.counts.reduce((a, b) => a + b, 0)).toBe(40);
    expect(decodeTable(table, AC)).not.toBeNull(); // libjpeg's checks, the all-ones rule among them
    const lengths = encodeTable(table, AC)!.length;
    expect(Math.max(...lengths.subarray(0, 40))).toBe(16);
    expect(lengths[39]).toBeLessThanOrEqual(2);
    expect(lengths[0]).toBe(16);
    // One symbol alone still gets a code (and the all-ones code stays free).
    expect(optimalSpec(Object.assign(new Array(256).fill(0), { 7: 5 }))).toEqual(spec({ 1: 1 }, [7]));
  });

  it('take extra symbols in their free code space, keeping every code they had', () => {
    const original = optimalSpec(Object.assign(new Array(256).fill(0), { 0: 50, 1: 30, 2: 10, 3: 3 }));
    const extended = withExtraSymbols(original, [9, 11])!;
    const [before, after] = [encodeTable(original, DC)!, encodeTable(extended, DC)!];
    for (const s of [0, 1, 2, 3]) expect([after.code[s], after.length[s]]).toEqual([before.code[s], before.length[s]]);
    expect(decodeTable(extended, DC)).not.toBeNull();
    expect(roundTrip(extended, DC, [9, 0, 11, 3])).toEqual([9, 0, 11, 3]);
    const full = withExtraSymbols(spec({ 1: 1, 16: 1 }, [0, 1]), [2]);
    expect(full).toBeNull();
  });
});
