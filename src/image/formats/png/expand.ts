import type { PngHeader } from './header';
import { GREY, GREY_ALPHA, PALETTE, RGB, RGBA } from './structure';

/**
 * Writes pixels first..first+count-1 of an unfiltered row (filter byte at 0) as RGBA words to
 * out[outAt], out[outAt + outStep], ... (little-endian words: R in the low byte). A step above 1
 * places an Adam7 pass's pixels between the others'.
 */
export type ExpandRow = (row: Uint8Array, first: number, count: number, out: Int32Array, outAt: number, outStep: number) => void;

const word = (r: number, g: number, b: number, a: number) => r | (g << 8) | (b << 16) | (a << 24);

/**
 * The row expander of an image, its tables built once. Samples reduce to 8 bits as libpng's
 * strip and expand transformations do: 16-bit keeps the high byte, 1/2/4-bit grey is scaled to
 * 0..255 (x255, x85, x17), palette indexes look up PLTE with the tRNS alphas (an index past the
 * palette is opaque black, as libpng's zero-filled 256-entry palette gives), and a grey or RGB
 * pixel equal to the tRNS key (compared at the file's bit depth) gets alpha 0.
 */
export function rowExpander(png: Pick<PngHeader, 'colourType' | 'bitDepth' | 'palette' | 'transparency'>): ExpandRow {
  const { colourType, bitDepth, transparency } = png;
  const key = transparency && 'key' in transparency ? transparency.key : null;
  if (colourType === PALETTE) return lookup(bitDepth, paletteWords(png.palette!, transparency && 'paletteAlphas' in transparency ? transparency.paletteAlphas : null));
  if (colourType === GREY && bitDepth < 16) return lookup(bitDepth, greyWords(bitDepth, key?.[0] ?? -1));
  if (colourType === GREY) return grey16(key?.[0] ?? -1);
  if (colourType === RGB) return bitDepth === 8 ? rgb8(key) : rgb16(key);
  if (colourType === GREY_ALPHA) return bitDepth === 8 ? greyAlpha8 : greyAlpha16;
  if (colourType === RGBA) return bitDepth === 8 ? rgba8 : rgba16;
  throw new Error(`png: colour type ${colourType}`);
}

function paletteWords(palette: Uint8Array, alphas: Uint8Array | null): Int32Array {
  const words = new Int32Array(256).fill(word(0, 0, 0, 255));
  for (let i = 0; i < palette.length / 3; i++) {
    words[i] = word(palette[3 * i], palette[3 * i + 1], palette[3 * i + 2], alphas && i < alphas.length ? alphas[i] : 255);
  }
  return words;
}

function greyWords(bitDepth: number, key: number): Int32Array {
  const levels = 1 << bitDepth;
  const scale = 255 / (levels - 1);
  const words = new Int32Array(levels);
  for (let v = 0; v < levels; v++) {
    const g = v * scale;
    words[v] = word(g, g, g, v === key ? 0 : 255);
  }
  return words;
}

/** Palette and grey up to 8 bits: each sample (1, 2, 4 or 8 bits, high bits first) indexes `words`. */
function lookup(bitDepth: number, words: Int32Array): ExpandRow {
  if (bitDepth === 8) {
    return (row, first, count, out, outAt, outStep) => {
      for (let i = 0, at = 1 + first, o = outAt; i < count; i++, o += outStep) out[o] = words[row[at + i]];
    };
  }
  const mask = (1 << bitDepth) - 1;
  return (row, first, count, out, outAt, outStep) => {
    for (let i = 0, bit = first * bitDepth, o = outAt; i < count; i++, bit += bitDepth, o += outStep) {
      out[o] = words[(row[1 + (bit >> 3)] >> (8 - bitDepth - (bit & 7))) & mask];
    }
  };
}

function grey16(key: number): ExpandRow {
  return (row, first, count, out, outAt, outStep) => {
    for (let i = 0, at = 1 + 2 * first, o = outAt; i < count; i++, at += 2, o += outStep) {
      const g = row[at];
      out[o] = word(g, g, g, ((g << 8) | row[at + 1]) === key ? 0 : 255);
    }
  };
}

function rgb8(key: number[] | null): ExpandRow {
  const [kr, kg, kb] = key ?? [-1, -1, -1];
  return (row, first, count, out, outAt, outStep) => {
    for (let i = 0, at = 1 + 3 * first, o = outAt; i < count; i++, at += 3, o += outStep) {
      const r = row[at];
      const g = row[at + 1];
      const b = row[at + 2];
      out[o] = word(r, g, b, r === kr && g === kg && b === kb ? 0 : 255);
    }
  };
}

function rgb16(key: number[] | null): ExpandRow {
  const [kr, kg, kb] = key ?? [-1, -1, -1];
  return (row, first, count, out, outAt, outStep) => {
    for (let i = 0, at = 1 + 6 * first, o = outAt; i < count; i++, at += 6, o += outStep) {
      const transparent = ((row[at] << 8) | row[at + 1]) === kr && ((row[at + 2] << 8) | row[at + 3]) === kg && ((row[at + 4] << 8) | row[at + 5]) === kb;
      out[o] = word(row[at], row[at + 2], row[at + 4], transparent ? 0 : 255);
    }
  };
}

const greyAlpha8: ExpandRow = (row, first, count, out, outAt, outStep) => {
  for (let i = 0, at = 1 + 2 * first, o = outAt; i < count; i++, at += 2, o += outStep) {
    const g = row[at];
    out[o] = word(g, g, g, row[at + 1]);
  }
};

const greyAlpha16: ExpandRow = (row, first, count, out, outAt, outStep) => {
  for (let i = 0, at = 1 + 4 * first, o = outAt; i < count; i++, at += 4, o += outStep) {
    const g = row[at];
    out[o] = word(g, g, g, row[at + 2]);
  }
};

const rgba8: ExpandRow = (row, first, count, out, outAt, outStep) => {
  if (outStep === 1) {
    new Uint8Array(out.buffer, out.byteOffset + 4 * outAt, 4 * count).set(row.subarray(1 + 4 * first, 1 + 4 * (first + count)));
    return;
  }
  for (let i = 0, at = 1 + 4 * first, o = outAt; i < count; i++, at += 4, o += outStep) {
    out[o] = word(row[at], row[at + 1], row[at + 2], row[at + 3]);
  }
};

const rgba16: ExpandRow = (row, first, count, out, outAt, outStep) => {
  for (let i = 0, at = 1 + 8 * first, o = outAt; i < count; i++, at += 8, o += outStep) {
    out[o] = word(row[at], row[at + 2], row[at + 4], row[at + 6]);
  }
};
