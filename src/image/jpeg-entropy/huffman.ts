import { LOOKAHEAD } from './bit-reader';

/**
 * Huffman tables as a JPEG file carries them (T.81 B.2.4.2: BITS and HUFFVAL), the decoding and
 * encoding forms derived from them (Annex C, F.2.2.3), and libjpeg's optimal tables (Annex K.2).
 */

export interface HuffmanSpec {
  /** Number of codes of each length: counts[1..16] (counts[0] unused). */
  counts: Uint8Array;
  /** The symbols, in order of increasing code length. */
  symbols: Uint8Array;
}

/** Huffman table class in DHT and the table slots: 0 = DC, 1 = AC (T.81 B.2.4.2, Tc). */
export const DC = 0;
export const AC = 1;

export interface DecodeTable {
  /** Indexed by the next 11 bits: code length << 8 | symbol, or 0 when the code is longer. */
  fast: Uint16Array;
  /**
   * Indexed by the next 11 bits, where a code and its additional bits fit in them: their length,
   * plus for DC tables the difference (length | difference << 5), for AC tables the symbol and
   * how far it moves along the block (length | advance << 5 | symbol << 10; advance: zero run + 1,
   * 16 for ZRL, 0 for EOB). 0 where they do not fit, and for AC symbols that are none of these.
   */
  whole: Int32Array;
  /** Largest code of each length 1..16, -1 where there is none (T.81 F.2.2.3, MAXCODE). */
  maxCode: Int32Array;
  /** symbols[code + valueOffset[length]] is the symbol of a code (VALPTR - MINCODE). */
  valueOffset: Int32Array;
  symbols: Uint8Array;
}

export interface EncodeTable {
  /** Code and its length of each symbol (T.81 C.2, EHUFCO / EHUFSI); length 0 = no code. */
  code: Uint16Array;
  length: Uint8Array;
}

/**
 * The codes of a table in symbol order (T.81 C.1 and C.2), or null where libjpeg refuses the table
 * (jpeg_make_d_derived_tbl): more than 256 symbols, or a code that does not fit its length, which
 * includes an all-ones code (reserved by T.81 K.2). DC symbols are difference categories, 0..15.
 */
function generateCodes(spec: HuffmanSpec, tableClass: number): { codes: Uint16Array; lengths: Uint8Array } | null {
  const total = spec.symbols.length;
  if (total > 256) return null;
  const codes = new Uint16Array(total);
  const lengths = new Uint8Array(total);
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++) {
    for (let i = 0; i < spec.counts[length]; i++) {
      codes[k] = code++;
      lengths[k++] = length;
    }
    if (code >= 1 << length) return null;
    code <<= 1;
  }
  if (k !== total) return null;
  if (tableClass === DC && spec.symbols.some((symbol) => symbol > 15)) return null;
  return { codes, lengths };
}

/** Decoding form of a table, or null if libjpeg would refuse it. */
export function decodeTable(spec: HuffmanSpec, tableClass: number): DecodeTable | null {
  const generated = generateCodes(spec, tableClass);
  if (!generated) return null;
  const { codes, lengths } = generated;
  const fast = new Uint16Array(1 << LOOKAHEAD);
  const whole = new Int32Array(1 << LOOKAHEAD);
  const maxCode = new Int32Array(18).fill(-1);
  const valueOffset = new Int32Array(18);
  for (let k = 0; k < codes.length; k++) {
    const length = lengths[k];
    const symbol = spec.symbols[k];
    if (maxCode[length] < 0) valueOffset[length] = k - codes[k];
    maxCode[length] = codes[k];
    if (length > LOOKAHEAD) continue;
    const first = codes[k] << (LOOKAHEAD - length);
    fast.fill((length << 8) | symbol, first, first + (1 << (LOOKAHEAD - length)));
    const size = symbol & 15;
    const total = length + size;
    if (total > LOOKAHEAD) continue;
    let advance = 0;
    if (tableClass === AC) {
      if (size !== 0) advance = (symbol >> 4) + 1;
      else if (symbol === 0xf0) advance = 16;
      else if (symbol !== 0x00) continue;
    }
    const spread = LOOKAHEAD - total;
    for (let bits = 0; bits < 1 << size; bits++) {
      const entry = tableClass === DC ? total | (size === 0 ? 0 : extend(bits, size) << 5) : total | (advance << 5) | (symbol << 10);
      const at = ((codes[k] << size) | bits) << spread;
      whole.fill(entry, at, at + (1 << spread));
    }
  }
  return { fast, whole, maxCode, valueOffset, symbols: spec.symbols };
}

/** T.81 F.2.2.1 EXTEND: the signed value of `size` additional bits. */
export function extend(bits: number, size: number): number {
  return bits < 1 << (size - 1) ? bits - (1 << size) + 1 : bits;
}

/** Encoding form of a table (a symbol listed twice keeps its first code). */
export function encodeTable(spec: HuffmanSpec, tableClass: number): EncodeTable | null {
  const generated = generateCodes(spec, tableClass);
  if (!generated) return null;
  const code = new Uint16Array(256);
  const length = new Uint8Array(256);
  for (let k = generated.codes.length - 1; k >= 0; k--) {
    code[spec.symbols[k]] = generated.codes[k];
    length[spec.symbols[k]] = generated.lengths[k];
  }
  return { code, length };
}

/**
 * A DC table with a code for every difference category 0..15: the luminance table of T.81 K.3
 * (categories 0..11) plus 12..14 at 11 bits and 15 at 12 bits. For scan data coded afresh, whose
 * DC differences an image's optimised table may have no code for.
 */
export const EVERY_DC_CATEGORY: HuffmanSpec = {
  counts: Uint8Array.of(0, 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 3, 1, 0, 0, 0, 0),
  symbols: Uint8Array.from({ length: 16 }, (_, i) => i),
};

/**
 * The table with codes added for `extra` symbols, one at each length past its longest, so every
 * code it had stays as it was: a table that libjpeg accepts leaves the top of its code space
 * unused (at least the all-ones code), and the added codes take it (T.81 C.2 assigns codes in
 * order). null when they would be longer than 16 bits.
 */
export function withExtraSymbols(spec: HuffmanSpec, extra: readonly number[]): HuffmanSpec | null {
  let longest = 16;
  while (longest > 0 && spec.counts[longest] === 0) longest--;
  if (longest + extra.length > 16) return null;
  const counts = spec.counts.slice();
  extra.forEach((_, i) => counts[longest + 1 + i]++);
  return { counts, symbols: Uint8Array.from([...spec.symbols, ...extra]) };
}

/**
 * The optimal table for the symbol frequencies `frequencies` (indexed by symbol, 0..255), exactly
 * as libjpeg's jpeg_gen_optimal_table builds it (T.81 K.2, Figures K.1 to K.4): a reserved
 * pseudo-symbol 256 keeps any code from being all ones, ties take the larger symbol, and codes
 * longer than 16 bits are folded back into 16. Symbols of frequency 0 get no code.
 */
export function optimalSpec(frequencies: ArrayLike<number>): HuffmanSpec {
  const freq = new Float64Array(257);
  for (let i = 0; i < 256; i++) freq[i] = frequencies[i] ?? 0;
  freq[256] = 1;
  const codeSize = new Int32Array(257);
  const others = new Int32Array(257).fill(-1);
  for (;;) {
    // The two least frequent trees (K.2, Figure K.1), ties going to the larger symbol.
    let c1 = -1;
    let v = Infinity;
    for (let i = 0; i <= 256; i++) {
      if (freq[i] && freq[i] <= v) {
        v = freq[i];
        c1 = i;
      }
    }
    let c2 = -1;
    v = Infinity;
    for (let i = 0; i <= 256; i++) {
      if (freq[i] && freq[i] <= v && i !== c1) {
        v = freq[i];
        c2 = i;
      }
    }
    if (c2 < 0) break;
    freq[c1] += freq[c2];
    freq[c2] = 0;
    codeSize[c1]++;
    while (others[c1] >= 0) {
      c1 = others[c1];
      codeSize[c1]++;
    }
    others[c1] = c2;
    codeSize[c2]++;
    while (others[c2] >= 0) {
      c2 = others[c2];
      codeSize[c2]++;
    }
  }
  // Code lengths can reach 256 in theory (libjpeg gives up past 32): count them all.
  const bits = new Int32Array(258);
  for (let i = 0; i <= 256; i++) if (codeSize[i]) bits[codeSize[i]]++;
  // K.2, Figure K.3: no code longer than 16 bits.
  for (let i = bits.length - 1; i > 16; i--) {
    while (bits[i] > 0) {
      let j = i - 2;
      while (bits[j] === 0) j--;
      bits[i] -= 2;
      bits[i - 1]++;
      bits[j + 1] += 2;
      bits[j]--;
    }
  }
  // The reserved symbol 256 gives up its code, one of the longest.
  let longest = 16;
  while (bits[longest] === 0) longest--;
  bits[longest]--;
  const counts = new Uint8Array(17);
  for (let i = 1; i <= 16; i++) counts[i] = bits[i];
  // K.2, Figure K.4: symbols sorted by their (unlimited) code length, then by value.
  const symbols: number[] = [];
  for (let size = 1; size <= 256; size++) {
    for (let symbol = 0; symbol < 256; symbol++) if (codeSize[symbol] === size) symbols.push(symbol);
  }
  return { counts, symbols: Uint8Array.from(symbols) };
}

/** One DHT segment (T.81 B.2.4.2) holding `tables`. */
export function dhtSegment(tables: readonly { tableClass: number; id: number; spec: HuffmanSpec }[]): Uint8Array {
  let length = 2;
  for (const { spec } of tables) length += 17 + spec.symbols.length;
  const segment = new Uint8Array(2 + length);
  segment.set([0xff, 0xc4, length >> 8, length & 0xff]);
  let at = 4;
  for (const { tableClass, id, spec } of tables) {
    segment[at++] = (tableClass << 4) | id;
    segment.set(spec.counts.subarray(1, 17), at);
    segment.set(spec.symbols, at + 16);
    at += 16 + spec.symbols.length;
  }
  return segment;
}
