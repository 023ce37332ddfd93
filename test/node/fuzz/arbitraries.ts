/**
 * fast-check arbitraries of fuzz inputs: random bytes (bare, behind a format's magic bytes, or
 * framed as a chunk/box/segment list of that format), and mutations of seed files. Every input is a
 * `FuzzInput` that prints as where it came from (seed name and mutation list), not as its bytes, so a
 * failure report stays short; the harness saves the bytes themselves to a file.
 */
import fc from 'fast-check';
import { concat } from '../../../src/image/bytes';
import { crc32 } from '../../../src/image/formats/png/header';
import type { Seed } from './seeds';

export class FuzzInput {
  constructor(
    readonly bytes: Uint8Array,
    readonly origin: string,
  ) {}

  [fc.toStringMethod](): string {
    const head = Buffer.from(this.bytes.subarray(0, 48)).toString('hex');
    return `FuzzInput(${this.origin}; ${this.bytes.length} bytes; starts ${head}${this.bytes.length > 48 ? '...' : ''})`;
  }
}

/** Formats random input can be framed as: the four containers, and a bare ICC profile. */
export type Container = 'jpeg' | 'png' | 'webp' | 'avif' | 'icc';

const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const u32be = (v: number) => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
const u32le = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

/** The bytes a file of each format starts with, enough to get past `detectFormat` (none for a profile, whose signature is at 36). */
export const MAGIC: Record<Container, Uint8Array[]> = {
  icc: [],
  jpeg: [new Uint8Array([0xff, 0xd8, 0xff])],
  png: [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  webp: [new Uint8Array([...text('RIFF'), 0xff, 0xff, 0, 0, ...text('WEBP')])],
  avif: [
    new Uint8Array([...u32be(20), ...text('ftypavif'), 0, 0, 0, 0, ...text('mif1')]),
    new Uint8Array([...u32be(24), ...text('ftypavis'), 0, 0, 0, 0, ...text('avifmsf1')]),
  ],
};

// ---------------------------------------------------------------------------------------------
// Random input

const smallBytes = fc.uint8Array({ maxLength: 64 });
const anyBytes = fc.oneof(smallBytes, fc.uint8Array({ maxLength: 4096, size: 'max' }));

/** A length field: usually right, sometimes extreme or a little off. */
const lengthFor = (actual: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(actual) },
    { weight: 1, arbitrary: fc.constantFrom(0, 1, 2, 0x7fffffff, 0xffffffff) },
    { weight: 1, arbitrary: fc.integer({ min: -4, max: 4 }).map((d) => Math.max(0, actual + d)) },
  );

const PNG_TYPES = ['IHDR', 'IDAT', 'IEND', 'PLTE', 'tRNS', 'eXIf', 'iCCP', 'tEXt', 'acTL', 'fcTL', 'fdAT', 'abcd'];
const WEBP_TYPES = ['VP8X', 'VP8 ', 'VP8L', 'ALPH', 'ANIM', 'ANMF', 'ICCP', 'EXIF', 'XMP ', 'INFO'];
const JPEG_MARKERS = [0xc0, 0xc2, 0xc4, 0xcc, 0xdb, 0xdd, 0xda, 0xd9, 0xd0, 0x01, 0xe0, 0xe1, 0xe2, 0xee, 0xef, 0xfe];
/** Boxes whose body is a list of boxes, with the bytes of full-box header / counts before it. */
const AVIF_CONTAINERS: Record<string, number> = {
  meta: 4, iprp: 0, ipco: 0, iinf: 6, iref: 4, moov: 0, trak: 0, mdia: 0, minf: 0, stbl: 0, stsd: 8, grpl: 0,
};
const AVIF_LEAVES = ['ftyp', 'hdlr', 'pitm', 'iloc', 'infe', 'ipma', 'ispe', 'irot', 'imir', 'colr', 'pixi', 'av1C', 'idat', 'mdat', 'cdsc', 'av01', 'stsc', 'stsz', 'stco', 'co64', 'free', 'abcd'];

const pngChunkArb = fc
  .record({ type: fc.constantFrom(...PNG_TYPES), data: smallBytes, goodCrc: fc.boolean() })
  .chain(({ type, data, goodCrc }) =>
    lengthFor(data.length).map((length) => {
      const head = new Uint8Array([...u32be(length), ...text(type)]);
      const crc = goodCrc ? crc32(concat([head.subarray(4), data])) : 0;
      return concat([head, data, new Uint8Array(u32be(crc))]);
    }),
  );

const webpChunkArb = fc
  .record({ type: fc.constantFrom(...WEBP_TYPES), data: smallBytes })
  .chain(({ type, data }) =>
    lengthFor(data.length).map((length) => concat([new Uint8Array([...text(type), ...u32le(length)]), data, new Uint8Array(data.length & 1)])),
  );

const jpegSegmentArb = fc.record({ marker: fc.constantFrom(...JPEG_MARKERS), data: smallBytes, fill: fc.nat({ max: 2 }) }).chain(({ marker, data, fill }) =>
  lengthFor(data.length + 2).map((length) => new Uint8Array([...new Array(fill).fill(0xff), 0xff, marker, (length >> 8) & 0xff, length & 0xff, ...data])),
);

const { avifBox } = fc.letrec<{ avifBox: Uint8Array }>((tie) => ({
  avifBox: fc.oneof(
    { depthSize: 'small', maxDepth: 3, withCrossShrink: true },
    fc.record({ type: fc.constantFrom(...AVIF_LEAVES), body: smallBytes }).map(({ type, body }) => concat([new Uint8Array([...u32be(8 + body.length), ...text(type)]), body])),
    fc
      .record({ type: fc.constantFrom(...Object.keys(AVIF_CONTAINERS)), children: fc.array(tie('avifBox'), { maxLength: 4 }), head: fc.uint8Array({ minLength: 8, maxLength: 8 }) })
      .map(({ type, children, head }) => {
        const body = concat([head.subarray(0, AVIF_CONTAINERS[type]), ...children]);
        return concat([new Uint8Array([...u32be(8 + body.length), ...text(type)]), body]);
      }),
  ),
}));

// ICC profiles: a header with a valid signature, a tag table and tag data of the types the readers
// know (curv, para, XYZ, sf32, mft1, mft2, mAB), with counts, grid sizes and offsets mostly sane
// and sometimes extreme.

const u16be = (v: number) => [(v >> 8) & 0xff, v & 0xff];
/** s15Fixed16 numbers: 1.0, 0, extremes, negative, or anything. */
const s15Arb = fc.oneof(
  fc.constantFrom(0x10000, 0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xffff0000, 0x8000),
  fc.nat({ max: 0x3ffff }),
  fc.nat({ max: 0xffffffff }),
).map(u32be);

const iccCurve: fc.Arbitrary<number[]> = fc.oneof(
  fc
    .record({
      count: fc.oneof(fc.nat({ max: 6 }), fc.constantFrom(256, 4096, 65536, 65537, 0x7fffffff, 0xffffffff)),
      values: fc.array(fc.oneof(fc.constantFrom(0, 0xffff, 0x100, 0x8000), fc.nat({ max: 0xffff })), { maxLength: 6 }),
    })
    .map(({ count, values }) => [...text('curv'), 0, 0, 0, 0, ...u32be(count), ...values.flatMap(u16be)]),
  fc
    .record({ type: fc.oneof(fc.nat({ max: 4 }), fc.constantFrom(5, 0xffff)), params: fc.array(s15Arb, { maxLength: 7 }) })
    .map(({ type, params }) => [...text('para'), 0, 0, 0, 0, ...u16be(type), 0, 0, ...params.flat()]),
);

const pad4 = (bytes: number[]) => [...bytes, ...new Array<number>((4 - (bytes.length % 4)) % 4).fill(0)];
const iccInputs = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 5, 15, 16, 255) });
const iccGrid = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 2, max: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 1, 17, 33, 255) });
/** `count` random 8- or 16-bit values when that is small, else a few (the table then runs past its tag). */
const tableValues = (count: number, bytes: 1 | 2) =>
  count * bytes <= 8192
    ? fc.uint8Array({ minLength: count * bytes, maxLength: count * bytes }).map((a) => Array.from(a))
    : fc.uint8Array({ maxLength: 16 }).map((a) => Array.from(a));

/** lut8Type / lut16Type. */
const iccLut: fc.Arbitrary<number[]> = fc
  .record({ wide: fc.boolean(), inputs: iccInputs, outputs: fc.constantFrom(3, 3, 3, 1, 4), grid: iccGrid, entries: fc.constantFrom(2, 2, 3, 256, 4096, 4097, 0, 1, 0xffff) })
  .chain(({ wide, inputs, outputs, grid, entries }) => {
    const size = wide ? 2 : 1;
    const inEntries = wide ? entries : 256;
    const count = inputs * inEntries + grid ** inputs * outputs + outputs * inEntries;
    return tableValues(count, size).map((values) => [
      ...text(wide ? 'mft2' : 'mft1'), 0, 0, 0, 0, inputs, outputs, grid, 0,
      ...[1, 0, 0, 0, 1, 0, 0, 0, 1].flatMap((v) => u32be(v << 16)),
      ...(wide ? [...u16be(entries), ...u16be(entries)] : []),
      ...values,
    ]);
  });

/** lutAToBType: B curves, then optional matrix, M curves, CLUT, A curves, each at a (mostly) right offset. */
const iccLutAToB: fc.Arbitrary<number[]> = fc
  .record({ inputs: iccInputs, outputs: fc.constantFrom(3, 3, 3, 1), grid: iccGrid, precision: fc.constantFrom(1, 2, 2, 0, 3), parts: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), offsetNoise: fc.array(fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constantFrom(-4, 2, 0x7fffffff, 0xffffffff) }), { minLength: 5, maxLength: 5 }) })
  .chain(({ inputs, outputs, grid, precision, parts: [hasMatrix, hasM, hasClut, hasA], offsetNoise }) =>
    fc
      .record({
        b: fc.array(iccCurve, { minLength: 3, maxLength: 3 }),
        matrix: fc.array(s15Arb, { minLength: 12, maxLength: 12 }),
        m: fc.array(iccCurve, { minLength: 3, maxLength: 3 }),
        clut: tableValues(grid ** inputs * 3, precision === 1 ? 1 : 2),
        a: fc.array(iccCurve, { minLength: inputs, maxLength: inputs }),
      })
      .map(({ b, matrix, m, clut, a }) => {
        let body: number[] = [];
        const place = (bytes: number[] | null, noise: number) => {
          if (!bytes) return 0;
          const at = 32 + body.length;
          body = body.concat(pad4(bytes));
          return noise === 0 ? at : noise > 0xffff ? noise : Math.max(0, at + noise);
        };
        const offsets = [
          place(b.flatMap(pad4), offsetNoise[0]),
          place(hasMatrix ? matrix.flat() : null, offsetNoise[1]),
          place(hasM ? m.flatMap(pad4) : null, offsetNoise[2]),
          place(hasClut ? [...new Array<number>(16).fill(0).map((_, i) => (i < inputs ? grid : 0)), precision, 0, 0, 0, ...clut] : null, offsetNoise[3]),
          place(hasA ? a.flatMap(pad4) : null, offsetNoise[4]),
        ];
        return [...text('mAB '), 0, 0, 0, 0, inputs, outputs, 0, 0, ...offsets.flatMap(u32be), ...body];
      }),
  );

const iccTagData: fc.Arbitrary<number[]> = fc.oneof(
  { weight: 3, arbitrary: iccCurve },
  { weight: 2, arbitrary: fc.array(s15Arb, { minLength: 3, maxLength: 3 }).map((v) => [...text('XYZ '), 0, 0, 0, 0, ...v.flat()]) },
  { weight: 1, arbitrary: fc.array(s15Arb, { minLength: 9, maxLength: 9 }).map((v) => [...text('sf32'), 0, 0, 0, 0, ...v.flat()]) },
  { weight: 2, arbitrary: iccLut },
  { weight: 3, arbitrary: iccLutAToB },
  { weight: 1, arbitrary: smallBytes.map((a) => Array.from(a)) },
);

const ICC_TAGS = ['rXYZ', 'gXYZ', 'bXYZ', 'rTRC', 'gTRC', 'bTRC', 'kTRC', 'A2B0', 'A2B1', 'A2B2', 'wtpt', 'chad', 'desc'];
/** A field's value: usually `actual`, sometimes extreme or a little off (like `lengthFor`, drawn before `actual` is known). */
type FieldNoise = null | { value: number } | { relative: number };
const fieldNoise: fc.Arbitrary<FieldNoise> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.record({ value: fc.constantFrom(0, 1, 0x7fffffff, 0xffffffff) }) },
  { weight: 1, arbitrary: fc.record({ relative: fc.integer({ min: -4, max: 4 }) }) },
);
const withNoise = (actual: number, noise: FieldNoise) =>
  noise === null ? actual : 'value' in noise ? noise.value : Math.max(0, actual + noise.relative);

const iccProfileArb: fc.Arbitrary<Uint8Array> = fc
  .record({
    colorSpace: fc.constantFrom('RGB ', 'RGB ', 'GRAY', 'CMYK', 'Lab ', 'abcd'),
    pcs: fc.constantFrom('XYZ ', 'Lab ', 'Lab ', 'RGB '),
    version: fc.constantFrom(2, 4, 0, 255),
    tags: fc.array(fc.record({ signature: fc.constantFrom(...ICC_TAGS), data: iccTagData, offset: fieldNoise, length: fieldNoise, shared: fc.boolean() }), { maxLength: 8 }),
    count: fieldNoise,
    size: fieldNoise,
    trailing: smallBytes,
  })
  .map(({ colorSpace, pcs, version, tags, count, size, trailing }) => {
    const tableEnd = 128 + 4 + 12 * tags.length;
    const table: number[] = [...u32be(withNoise(tags.length, count))];
    let data: number[] = [];
    let previous = { offset: tableEnd, length: 0 };
    for (const tag of tags) {
      // A shared tag points at the previous tag's data, as profiles share one TRC for r, g and b.
      const at = tag.shared && previous.length > 0 ? previous : { offset: tableEnd + data.length, length: tag.data.length };
      if (at !== previous) data = data.concat(pad4(tag.data));
      table.push(...text(tag.signature), ...u32be(withNoise(at.offset, tag.offset)), ...u32be(withNoise(at.length, tag.length)));
      previous = at;
    }
    const total = tableEnd + data.length;
    const header = [
      ...u32be(withNoise(total, size)), ...text('fuzz'), version, 0x20, 0, 0, ...text('mntr'), ...text(colorSpace), ...text(pcs),
      ...new Array<number>(12).fill(0), ...text('acsp'), ...new Array<number>(88).fill(0),
    ];
    return concat([new Uint8Array(header), new Uint8Array(table), new Uint8Array(data), trailing]);
  });

/** A file of `format` made of random chunks/boxes/segments with mostly consistent lengths. */
function framed(format: Container): fc.Arbitrary<Uint8Array> {
  switch (format) {
    case 'png':
      return fc.array(pngChunkArb, { maxLength: 8 }).map((chunks) => concat([MAGIC.png[0], ...chunks]));
    case 'webp':
      return fc.array(webpChunkArb, { maxLength: 8 }).chain((chunks) => {
        const body = concat(chunks);
        return lengthFor(body.length + 4).map((size) => concat([new Uint8Array([...text('RIFF'), ...u32le(size), ...text('WEBP')]), body]));
      });
    case 'jpeg':
      return fc
        .record({ segments: fc.array(jpegSegmentArb, { maxLength: 8 }), scan: smallBytes, end: fc.boolean() })
        .map(({ segments, scan, end }) => concat([new Uint8Array([0xff, 0xd8]), ...segments, scan, new Uint8Array(end ? [0xff, 0xd9] : [])]));
    case 'avif':
      return fc.record({ ftyp: fc.constantFrom(...MAGIC.avif), boxes: fc.array(avifBox, { maxLength: 4 }) }).map(({ ftyp, boxes }) => concat([ftyp, ...boxes]));
    case 'icc':
      return iccProfileArb;
  }
}

/** Random bytes: bare, behind one of `formats`' magic bytes, or framed as that format's chunk list. */
export function randomInput(formats: readonly Container[]): fc.Arbitrary<FuzzInput> {
  const bare = anyBytes.map((bytes) => new FuzzInput(bytes, 'random'));
  if (formats.length === 0) return bare;
  const format = fc.constantFrom(...formats);
  const withMagic = formats.filter((f) => MAGIC[f].length > 0);
  if (withMagic.length === 0) {
    const structured = format.chain((f) => framed(f).map((bytes) => new FuzzInput(bytes, `random ${f} framing`)));
    return fc.oneof({ arbitrary: bare, weight: 1 }, { arbitrary: structured, weight: 5 });
  }
  const behindMagic = fc
    .tuple(fc.constantFrom(...withMagic), fc.nat(), anyBytes)
    .map(([f, i, tail]) => new FuzzInput(concat([MAGIC[f][i % MAGIC[f].length], tail]), `random after ${f} magic`));
  const structured = format.chain((f) => framed(f).map((bytes) => new FuzzInput(bytes, `random ${f} framing`)));
  return fc.oneof({ arbitrary: bare, weight: 1 }, { arbitrary: behindMagic, weight: 2 }, { arbitrary: structured, weight: 3 });
}

// ---------------------------------------------------------------------------------------------
// Mutations of seed files

/** Offsets as drawn; taken modulo the current length when applied. Mostly in the headers. */
const offset = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 511 }) },
  { weight: 2, arbitrary: fc.nat({ max: 8191 }) },
  { weight: 1, arbitrary: fc.nat({ max: 0x7fffffff }) },
);

const EXTREME_32 = [0, 1, 2, 7, 8, 9, 16, 0x7f, 0x80, 0xff, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
const EXTREME_16 = [0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xfffe, 0xffff];

type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'field'; at: number; bytes: 2 | 4; little: boolean; value: number | { relative: number } }
  | { op: 'insert'; at: number; data: Uint8Array }
  | { op: 'delete'; at: number; length: number }
  | { op: 'truncate'; at: number }
  | { op: 'duplicate'; from: number; length: number; to: number }
  | { op: 'fill'; at: number; length: number; value: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('flip' as const), at: offset, bit: fc.nat({ max: 7 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('set' as const), at: offset, value: fc.oneof(fc.constantFrom(0, 0xff, 0x7f, 0x80), fc.nat({ max: 255 })) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('field' as const),
      at: offset,
      bytes: fc.constant(4 as const),
      little: fc.boolean(),
      value: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...EXTREME_32) },
        { weight: 1, arbitrary: fc.nat({ max: 0xffffffff }) },
        { weight: 2, arbitrary: fc.record({ relative: fc.integer({ min: -16, max: 16 }) }) },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('field' as const),
      at: offset,
      bytes: fc.constant(2 as const),
      little: fc.boolean(),
      value: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...EXTREME_16) }, { weight: 1, arbitrary: fc.record({ relative: fc.integer({ min: -16, max: 16 }) }) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('insert' as const), at: offset, data: fc.uint8Array({ minLength: 1, maxLength: 32 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), at: offset, length: fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 4096 })) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: offset }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('duplicate' as const), from: offset, length: fc.integer({ min: 1, max: 512 }), to: offset }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fill' as const), at: offset, length: fc.integer({ min: 1, max: 64 }), value: fc.constantFrom(0, 0xff) }) },
);

function describeMutation(m: Mutation): string {
  switch (m.op) {
    case 'flip':
      return `flip@${m.at}.${m.bit}`;
    case 'set':
      return `set@${m.at}=${m.value}`;
    case 'field':
      return `u${m.bytes * 8}${m.little ? 'le' : 'be'}@${m.at}=${typeof m.value === 'number' ? `0x${m.value.toString(16)}` : `rest${m.value.relative >= 0 ? '+' : ''}${m.value.relative}`}`;
    case 'insert':
      return `insert@${m.at}:${Buffer.from(m.data).toString('hex')}`;
    case 'delete':
      return `delete@${m.at}+${m.length}`;
    case 'truncate':
      return `truncate@${m.at}`;
    case 'duplicate':
      return `duplicate ${m.from}+${m.length}->${m.to}`;
    case 'fill':
      return `fill@${m.at}+${m.length}=${m.value}`;
  }
}

/** Applies `m` to `bytes` (never modified); offsets are reduced modulo the current length. */
function apply(bytes: Uint8Array, m: Mutation): Uint8Array {
  const n = bytes.length;
  if (n === 0) return m.op === 'insert' ? m.data.slice() : bytes;
  switch (m.op) {
    case 'flip': {
      const out = bytes.slice();
      out[m.at % n] ^= 1 << m.bit;
      return out;
    }
    case 'set': {
      const out = bytes.slice();
      out[m.at % n] = m.value;
      return out;
    }
    case 'field': {
      const at = m.at % n;
      const value = typeof m.value === 'number' ? m.value : Math.max(0, n - at + m.value.relative);
      const out = bytes.slice();
      for (let i = 0; i < m.bytes && at + i < n; i++) {
        const shift = 8 * (m.little ? i : m.bytes - 1 - i);
        out[at + i] = Math.floor(value / 2 ** shift) & 0xff;
      }
      return out;
    }
    case 'insert': {
      const at = m.at % (n + 1);
      return concat([bytes.subarray(0, at), m.data, bytes.subarray(at)]);
    }
    case 'delete': {
      const at = m.at % n;
      return concat([bytes.subarray(0, at), bytes.subarray(Math.min(n, at + m.length))]);
    }
    case 'truncate':
      return bytes.slice(0, m.at % n);
    case 'duplicate': {
      const from = m.from % n;
      const to = m.to % (n + 1);
      return concat([bytes.subarray(0, to), bytes.subarray(from, Math.min(n, from + m.length)), bytes.subarray(to)]);
    }
    case 'fill': {
      const out = bytes.slice();
      out.fill(m.value, m.at % n, Math.min(n, (m.at % n) + m.length));
      return out;
    }
  }
}

/** A seed file with one to four mutations applied in turn. */
export function mutatedSeed(seeds: readonly Seed[]): fc.Arbitrary<FuzzInput> {
  if (seeds.length === 0) throw new Error('mutatedSeed: no seeds');
  return fc
    .record({ seed: fc.nat({ max: seeds.length - 1 }), mutations: fc.array(mutation, { minLength: 1, maxLength: 4 }) })
    .map(({ seed, mutations }) => {
      let bytes = seeds[seed].bytes;
      for (const m of mutations) bytes = apply(bytes, m);
      if (bytes === seeds[seed].bytes) bytes = bytes.slice(); // an input of its own, whatever the mutations did
      return new FuzzInput(bytes, `${seeds[seed].name} | ${mutations.map(describeMutation).join(', ')}`);
    });
}
