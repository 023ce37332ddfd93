/**
 * Test-only PNG writer for every colour type, bit depth, filter and Adam7, written from the PNG
 * specification independently of src/image/formats/png (which it tests), with the RGBA pixels a decoder
 * must give for the file (8 bits: high byte of 16-bit samples, sub-byte grey scaled to 0..255,
 * palette with tRNS alphas, tRNS keys transparent). Runs in workerd and in Node.
 */
import { concat } from '../../src/image/bytes';
import { pngChunk } from '../../src/image/formats/png/header';
import { PNG_SIGNATURE } from '../../src/image/formats/png/header';

export interface PngSpec {
  width: number;
  height: number;
  colourType: 0 | 2 | 3 | 4 | 6;
  bitDepth: 1 | 2 | 4 | 8 | 16;
  interlaced: boolean;
  /** Sample of channel c at (x, y), in 0..2^bitDepth - 1 (a palette index for type 3). */
  sample: (x: number, y: number, c: number) => number;
  /** Type 3: RGB entries. */
  palette?: Array<[number, number, number]>;
  /** tRNS: palette alphas (type 3) or the key sample per channel (types 0, 2). */
  transparency?: number[];
  /** Filter type of the n-th row written (all passes counted); default cycles 0..4. */
  filter?: (n: number) => number;
  /** Size of each IDAT chunk's data (default: one chunk). */
  idatBytes?: number;
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** zlib (RFC 1950) compression through the platform's CompressionStream. */
export async function zlibDeflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data.slice()]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The filtered scanlines of every pass, as a decoder inflates them. */
export function scanlines(spec: PngSpec): Uint8Array {
  const channels = CHANNELS[spec.colourType];
  const bits = channels * spec.bitDepth;
  const bpp = Math.max(1, bits >> 3);
  const rows: Uint8Array[] = [];
  let n = 0;
  const layout = spec.interlaced ? ADAM7 : [[0, 0, 1, 1]];
  for (const [x0, y0, dx, dy] of layout) {
    const xs: number[] = [];
    for (let x = x0; x < spec.width; x += dx) xs.push(x);
    if (xs.length === 0) continue;
    let prior = new Uint8Array(Math.ceil((xs.length * bits) / 8));
    for (let y = y0; y < spec.height; y += dy) {
      const raw = new Uint8Array(prior.length);
      xs.forEach((x, i) => {
        for (let c = 0; c < channels; c++) {
          const value = spec.sample(x, y, c);
          if (spec.bitDepth === 16) {
            raw[2 * (i * channels + c)] = value >> 8;
            raw[2 * (i * channels + c) + 1] = value & 255;
          } else {
            const bit = (i * channels + c) * spec.bitDepth;
            raw[bit >> 3] |= value << (8 - spec.bitDepth - (bit & 7));
          }
        }
      });
      const type = (spec.filter ?? ((k) => k % 5))(n++);
      rows.push(new Uint8Array([type]), filtered(type, raw, prior, bpp));
      prior = raw;
    }
  }
  return concat(rows);
}

function filtered(type: number, raw: Uint8Array, prior: Uint8Array, bpp: number): Uint8Array {
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const a = i >= bpp ? raw[i - bpp] : 0;
    const b = prior[i];
    const c = i >= bpp ? prior[i - bpp] : 0;
    const p = a + b - c;
    const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
    const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    const predictor = [0, a, b, Math.floor((a + b) / 2), paeth][type];
    out[i] = (raw[i] - predictor) & 255;
  }
  return out;
}

/** IHDR, PLTE and tRNS as the spec describes them. */
export function headerChunks(spec: PngSpec): Uint8Array[] {
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, spec.width);
  new DataView(ihdr.buffer).setUint32(4, spec.height);
  ihdr.set([spec.bitDepth, spec.colourType, 0, 0, spec.interlaced ? 1 : 0], 8);
  const chunks = [Uint8Array.from(PNG_SIGNATURE), pngChunk('IHDR', ihdr)];
  if (spec.palette) chunks.push(pngChunk('PLTE', spec.palette.flat()));
  if (spec.transparency) {
    const t = spec.transparency;
    chunks.push(pngChunk('tRNS', spec.colourType === 3 ? t : t.flatMap((v) => [v >> 8, v & 255])));
  }
  return chunks;
}

/** `data` split into IDAT chunks of `size` bytes (one chunk when absent). */
export function idatChunks(data: Uint8Array, size = data.length || 1): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(pngChunk('IDAT', data.subarray(at, at + size)));
  return chunks;
}

/** A complete file for `spec`, its image data compressed by the platform's zlib. */
export async function buildPng(spec: PngSpec): Promise<Uint8Array> {
  return pngFromZlib(spec, await zlibDeflate(scanlines(spec)));
}

/** A file for `spec` around the given zlib stream (damaged or hostile ones too). */
export function pngFromZlib(spec: PngSpec, zlib: Uint8Array, after: Uint8Array[] = []): Uint8Array {
  return concat([...headerChunks(spec), ...idatChunks(zlib, spec.idatBytes), ...after, pngChunk('IEND')]);
}

/** The RGBA pixels a decoder must return for `spec`. */
export function expectedRgba(spec: PngSpec): Uint8Array {
  const { width, height, colourType, bitDepth } = spec;
  const max = 2 ** bitDepth - 1;
  const to8 = (v: number) => (bitDepth === 16 ? v >> 8 : Math.round((v * 255) / max));
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const s = Array.from({ length: CHANNELS[colourType] }, (_, c) => spec.sample(x, y, c));
      const key = spec.transparency;
      let rgba: number[];
      if (colourType === 3) {
        const entry = spec.palette![s[0]] ?? [0, 0, 0];
        rgba = [...entry, key && s[0] < key.length ? key[s[0]] : 255];
      } else if (colourType === 0) {
        rgba = [to8(s[0]), to8(s[0]), to8(s[0]), key && key[0] === s[0] ? 0 : 255];
      } else if (colourType === 2) {
        rgba = [to8(s[0]), to8(s[1]), to8(s[2]), key && key.every((k, c) => k === s[c]) ? 0 : 255];
      } else if (colourType === 4) {
        rgba = [to8(s[0]), to8(s[0]), to8(s[0]), to8(s[1])];
      } else {
        rgba = s.map(to8);
      }
      out.set(rgba, (y * width + x) * 4);
    }
  }
  return out;
}

/** Deterministic samples: a mix of position and a hash, so neighbouring pixels differ and filters matter. */
export function hashedSamples(bitDepth: number, seed = 1): PngSpec['sample'] {
  const max = 2 ** bitDepth - 1;
  return (x, y, c) => {
    let h = Math.imul(x + 1, 0x9e3779b1) ^ Math.imul(y + 7, 0x85ebca77) ^ Math.imul(c + seed, 0xc2b2ae3d);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 13;
    return ((h >>> 0) % (max + 1)) & max;
  };
}

/**
 * A zlib stream that inflates to `data` followed by `zeros` zero bytes, written by hand in one
 * fixed-Huffman block: `data` as literals, then a zero literal and copies of 258 bytes at
 * distance 1 (13 bits each, so eight of them repeat every 13 bytes). Built without compressing
 * the zeros, so a 10 GB bomb takes 63 MB and no time. Its Adler-32 is left 0: no decoder may get there.
 */
export function zlibWithZeros(data: Uint8Array, zeros: number): Uint8Array {
  const copies = Math.max(0, Math.floor((zeros - 1) / 258));
  const out = new Uint8Array(2 + Math.ceil(((data.length + 1) * 9 + (copies + 8) * 13 + 3 + 7) / 8) + 8);
  out.set([0x78, 0x01]);
  let bit = 16;
  const put = (value: number, count: number) => {
    for (let i = 0; i < count; i++, bit++) if ((value >> i) & 1) out[bit >> 3] |= 1 << (bit & 7);
  };
  // Huffman codes go most significant bit first.
  const code = (value: number, count: number) => {
    for (let i = count - 1; i >= 0; i--, bit++) if ((value >> i) & 1) out[bit >> 3] |= 1 << (bit & 7);
  };
  const literal = (v: number) => (v < 144 ? code(0x30 + v, 8) : code(0x190 + v - 144, 9));
  const copy = () => {
    code(0xc5, 8); // length code 285: 258 bytes
    code(0, 5); // distance code 0: distance 1
  };
  put(1, 1); // BFINAL
  put(1, 2); // BTYPE 01, fixed Huffman codes
  for (const v of data) literal(v);
  let left = copies;
  if (zeros > 0) literal(0);
  while (left > 0 && bit % 8 !== 0) {
    copy();
    left--;
  }
  // Eight copies are exactly 13 bytes: write them once, then double the run with copyWithin.
  const periods = Math.floor(left / 8);
  if (periods > 0) {
    const start = bit >> 3;
    for (let i = 0; i < 8; i++) copy();
    let written = 1;
    while (written < periods) {
      const n = Math.min(written, periods - written);
      out.copyWithin(start + written * 13, start, start + n * 13);
      written += n;
    }
    bit = (start + periods * 13) * 8;
    left -= periods * 8;
  }
  for (; left > 0; left--) copy();
  code(0, 7); // end of block
  return out.subarray(0, Math.ceil(bit / 8) + 4);
}

/**
 * A large file without holding its pixels: rows from `row(y, out)` (filter byte 0 at out[0])
 * compressed in batches as they are made. For decoding tests at 12 and 24 MP.
 */
export async function streamedPng(spec: Omit<PngSpec, 'sample' | 'interlaced'>, row: (y: number, out: Uint8Array) => void): Promise<Uint8Array> {
  const channels = CHANNELS[spec.colourType];
  const rowBytes = 1 + Math.ceil((spec.width * channels * spec.bitDepth) / 8);
  const stream = new CompressionStream('deflate');
  const writer = stream.writable.getWriter();
  const compressed = new Response(stream.readable).arrayBuffer();
  const rowsPerBatch = Math.max(1, Math.floor((1 << 20) / rowBytes));
  for (let y = 0; y < spec.height; y += rowsPerBatch) {
    const rows = Math.min(rowsPerBatch, spec.height - y);
    const batch = new Uint8Array(rows * rowBytes);
    for (let i = 0; i < rows; i++) row(y + i, batch.subarray(i * rowBytes, (i + 1) * rowBytes));
    await writer.write(batch);
  }
  await writer.close();
  return pngFromZlib({ ...spec, interlaced: false, sample: () => 0, idatBytes: 1 << 20 }, new Uint8Array(await compressed));
}
