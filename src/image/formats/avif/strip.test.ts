import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../index';
import { findBox, isoBoxes, type IsoBox } from './boxes';
import type { RgbaImage } from '../../types';
import { box, fullBox, text, u16, u32, u64 } from '../../../../test/support/byte-builders';
import { AVIFS, corpus, decodeRgba, encodeWith, expectAppError, mutated, prefixLengths, resultOrAppError, sameBytes } from '../../../../test/support/image-testing';
import { readOrientation, stripped, readDimensions } from '../../../../test/support/formats';

// ---------------------------------------------------------------------------------------------
// Box building

const infe = (id: number, type: string, name: string, contentType?: string) =>
  fullBox('infe', 2, 0, u16(id), u16(0), text(type), text(name + '\0'), contentType === undefined ? [] : text(contentType + '\0'));
const colr = (type: 'prof' | 'rICC' | 'nclx', payload: number[]) => box('colr', text(type), payload);
const NCLX = colr('nclx', [0, 1, 0, 13, 0, 6, 0x80]); // BT.709 primaries, sRGB transfer, BT.601 matrix, full range
const irot = (angle: number) => box('irot', [angle]);
const imir = (axis: number) => box('imir', [axis]);

/** A TIFF block with Make and GPS-ish text, so its bytes are recognisable in the output. */
const EXIF_PAYLOAD = new Uint8Array([...u32(0), ...text('MM'), 0, 42, ...u32(8), ...u16(1), ...u16(0x010f), ...u16(2), ...u32(12), ...u32(26), ...u32(0), ...text('SECRET-CAMERA-MAKE\0')]);
const XMP_PAYLOAD = new Uint8Array(text('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF>SECRET-XMP-GPS</rdf:RDF></x:xmpmeta>'));
const ICC_PAYLOAD = text('fake icc profile SECRET-ICC');

// ---------------------------------------------------------------------------------------------
// A test-side model of a still AVIF: enough to add items and properties and to lay the file out in
// different ways (it is independent of the code under test except for the box walker).

interface Item {
  id: number;
  infe: number[];
  data: Uint8Array;
  /** Store the data in idat (construction method 1) instead of mdat. */
  inIdat?: boolean;
}

interface Model {
  ftyp: number[];
  hdlr: number[];
  primary: number;
  items: Item[];
  properties: number[][];
  /** Item ID -> raw 15-bit association values (0x8000 = essential | 1-based index). */
  associations: Map<number, number[]>;
  refs: { type: string; from: number; to: number[] }[];
}

interface Layout {
  ilocVersion?: 0 | 1 | 2;
  /** ipma version 1 with 15-bit indices. */
  wideIpma?: boolean;
  mdatFirst?: boolean;
  mdatHeader?: 'plain' | 'large' | 'to-end';
  /** Extra top-level boxes after ftyp. */
  extraTop?: number[][];
  /** Extra boxes inside meta. */
  extraMeta?: number[][];
  /** Split every item's data into this many extents, in reverse order in mdat. */
  extents?: number;
  /** iloc v1/v2 with base_offset_size 4 and index_size 4 (valid HEIF; the bundled libavif refuses both). */
  ilocExtras?: boolean;
}

const view = (bytes: Uint8Array, b: IsoBox) => bytes.subarray(0, b.end);
const be32 = (bytes: Uint8Array, at: number) => bytes[at] * 0x1000000 + ((bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]);
const be16 = (bytes: Uint8Array, at: number) => (bytes[at] << 8) | bytes[at + 1];
function beN(bytes: Uint8Array, at: number, size: number): number {
  if (size === 0) return 0;
  if (size === 4) return be32(bytes, at);
  return be32(bytes, at) * 2 ** 32 + be32(bytes, at + 4);
}
const type4 = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
const raw = (bytes: Uint8Array, b: IsoBox) => Array.from(bytes.subarray(b.start, b.end));

interface Parsed {
  top: IsoBox[];
  items: { id: number; type: string; contentType: string | null; infe: IsoBox }[];
  locations: Map<number, { method: number; extents: { offset: number; length: number }[] }>;
  properties: IsoBox[];
  associations: Map<number, number[]>;
  ipmaCount: number;
  refs: { type: string; from: number; to: number[] }[];
  primary: number;
  idat: IsoBox | null;
  meta: IsoBox;
}

/** Parses a still AVIF the way a reader would (test oracle for the rewritten structure). */
function parse(bytes: Uint8Array): Parsed {
  const top = [...isoBoxes(bytes, 0, bytes.length)];
  const meta = top.find((b) => b.type === 'meta')!;
  const child = (type: string) => findBox(bytes, meta, type, 4);
  const iinf = child('iinf')!;
  const iinfVersion = bytes[iinf.body];
  const items = [...isoBoxes(bytes, iinf.body + (iinfVersion === 0 ? 6 : 8), iinf.end)].map((e) => {
    const v = bytes[e.body];
    const id = v === 2 ? be16(bytes, e.body + 4) : be32(bytes, e.body + 4);
    const typeAt = e.body + (v === 2 ? 8 : 10);
    const type = type4(bytes, typeAt);
    const strings = new TextDecoder('latin1').decode(bytes.subarray(typeAt + 4, e.end)).split('\0');
    return { id, type, contentType: type === 'mime' ? strings[1] : null, infe: e };
  });
  expect(items.length, 'iinf entry_count').toBe(iinfVersion === 0 ? be16(bytes, iinf.body + 4) : be32(bytes, iinf.body + 4));

  const iloc = child('iloc')!;
  const locations: Parsed['locations'] = new Map();
  {
    const b = view(bytes, iloc);
    const version = b[iloc.body];
    const offsetSize = b[iloc.body + 4] >> 4;
    const lengthSize = b[iloc.body + 4] & 15;
    const baseSize = b[iloc.body + 5] >> 4;
    const indexSize = version > 0 ? b[iloc.body + 5] & 15 : 0;
    let at = iloc.body + 6;
    const count = version < 2 ? be16(b, at) : be32(b, at);
    at += version < 2 ? 2 : 4;
    for (let i = 0; i < count; i++) {
      const id = version < 2 ? be16(b, at) : be32(b, at);
      at += version < 2 ? 2 : 4;
      const method = version > 0 ? be16(b, at) & 15 : 0;
      if (version > 0) at += 2;
      expect(be16(b, at), 'data_reference_index').toBe(0);
      const base = beN(b, at + 2, baseSize);
      at += 2 + baseSize;
      const n = be16(b, at);
      at += 2;
      const extents = [];
      for (let e = 0; e < n; e++) {
        at += indexSize;
        extents.push({ offset: base + beN(b, at, offsetSize), length: beN(b, at + offsetSize, lengthSize) });
        at += offsetSize + lengthSize;
      }
      locations.set(id, { method, extents });
    }
    expect(at, 'iloc fully used').toBe(iloc.end);
  }

  const iprp = child('iprp')!;
  const ipco = findBox(bytes, iprp, 'ipco')!;
  const properties = [...isoBoxes(bytes, ipco.body, ipco.end)];
  const associations = new Map<number, number[]>();
  const ipmas = [...isoBoxes(bytes, iprp.body, iprp.end)].filter((b) => b.type === 'ipma');
  for (const ipma of ipmas) {
    const b = view(bytes, ipma);
    const version = b[ipma.body];
    const wide = (b[ipma.body + 3] & 1) === 1;
    let at = ipma.body + 8;
    for (let e = 0; e < be32(b, ipma.body + 4); e++) {
      const id = version === 0 ? be16(b, at) : be32(b, at);
      at += version === 0 ? 2 : 4;
      const values: number[] = [];
      for (let a = 0, n = b[at++]; a < n; a++) {
        values.push(wide ? be16(b, at) : ((b[at] & 0x80) << 8) | (b[at] & 0x7f));
        at += wide ? 2 : 1;
      }
      associations.set(id, values);
    }
    expect(at, 'ipma fully used').toBe(ipma.end);
  }

  const refs: Parsed['refs'] = [];
  const iref = child('iref');
  if (iref) {
    const idSize = bytes[iref.body] === 0 ? 2 : 4;
    const id = (at: number) => (idSize === 2 ? be16(bytes, at) : be32(bytes, at));
    for (const ref of isoBoxes(bytes, iref.body + 4, iref.end)) {
      const count = be16(bytes, ref.body + idSize);
      refs.push({ type: ref.type, from: id(ref.body), to: Array.from({ length: count }, (_, i) => id(ref.body + idSize + 2 + i * idSize)) });
    }
  }
  const pitm = child('pitm')!;
  const primary = bytes[pitm.body] === 0 ? be16(bytes, pitm.body + 4) : be32(bytes, pitm.body + 4);
  return { top, items, locations, properties, associations, ipmaCount: ipmas.length, refs, primary, idat: child('idat'), meta };
}

/** The bytes of an item, gathered from its extents. */
function itemData(bytes: Uint8Array, parsed: Parsed, id: number): Uint8Array {
  const location = parsed.locations.get(id)!;
  const source = location.method === 1 ? bytes.subarray(parsed.idat!.body, parsed.idat!.end) : bytes;
  return new Uint8Array(location.extents.flatMap(({ offset, length }) => Array.from(source.subarray(offset, offset + (length || source.length - offset)))));
}

function decompose(bytes: Uint8Array): Model {
  const p = parse(bytes);
  return {
    ftyp: raw(bytes, p.top[0]),
    hdlr: raw(bytes, findBox(bytes, p.meta, 'hdlr', 4)!),
    primary: p.primary,
    items: p.items.map((item) => ({ id: item.id, infe: raw(bytes, item.infe), data: itemData(bytes, p, item.id) })),
    properties: p.properties.map((b) => raw(bytes, b)),
    associations: new Map([...p.associations].map(([id, values]) => [id, [...values]])),
    refs: p.refs.map((r) => ({ ...r, to: [...r.to] })),
  };
}

function compose(model: Model, layout: Layout = {}): Uint8Array {
  const ilocVersion = layout.ilocVersion ?? (model.items.some((i) => i.inIdat) ? 1 : 0);
  const idSize = ilocVersion === 2 ? 4 : 2;
  const pieces = layout.extents ?? 1;
  // idat payload and mdat payload (pieces of every item, stored in reverse order to test offsets).
  const idatData: number[] = [];
  const chunks: { item: Item; piece: number; bytes: Uint8Array }[] = [];
  for (const item of model.items) {
    const size = Math.ceil(item.data.length / pieces);
    for (let k = 0; k < pieces; k++) chunks.push({ item, piece: k, bytes: item.data.subarray(k * size, (k + 1) * size) });
  }
  const mdatChunks = chunks.filter((c) => !c.item.inIdat).reverse();
  const where = new Map<string, number>();
  let mdatLength = 0;
  for (const c of mdatChunks) {
    where.set(`${c.item.id}/${c.piece}`, mdatLength);
    mdatLength += c.bytes.length;
  }
  for (const c of chunks.filter((c) => c.item.inIdat)) {
    where.set(`${c.item.id}/${c.piece}`, idatData.length);
    idatData.push(...c.bytes);
  }
  const mdatHeaderSize = layout.mdatHeader === 'large' ? 16 : 8;
  const mdatBox = (payloadStart: number) => {
    void payloadStart;
    const payload = mdatChunks.flatMap((c) => Array.from(c.bytes));
    if (layout.mdatHeader === 'large') return [...u32(1), ...text('mdat'), ...u64(16 + payload.length), ...payload];
    if (layout.mdatHeader === 'to-end') return [...u32(0), ...text('mdat'), ...payload];
    return box('mdat', payload);
  };

  const metaBox = (mdatPayload: number) => {
    // iloc v0: base_offset = mdat payload start and relative extent offsets (the bundled libavif refuses
    // a base_offset_size other than 0 in v1/v2); v1/v2: absolute offsets and a 4-byte extent_index.
    const withBase = ilocVersion === 0 || !!layout.ilocExtras;
    const withIndex = ilocVersion > 0 && !!layout.ilocExtras;
    const entries = model.items.map((item) => {
      const pieceSize = Math.ceil(item.data.length / pieces);
      const ext = Array.from({ length: pieces }, (_, k) => {
        const offset = where.get(`${item.id}/${k}`)! + (withBase || item.inIdat ? 0 : mdatPayload);
        const length = Math.min(pieceSize, item.data.length - k * pieceSize);
        return [...(withIndex ? u32(1) : []), ...u32(offset), ...u32(length)];
      });
      return [
        ...(idSize === 2 ? u16(item.id) : u32(item.id)),
        ...(ilocVersion > 0 ? u16(item.inIdat ? 1 : 0) : []),
        ...u16(0),
        ...(withBase ? u32(mdatPayload) : []),
        ...u16(pieces),
        ...ext.flat(),
      ];
    });
    const iloc = fullBox('iloc', ilocVersion, 0, [0x44, (withBase ? 0x40 : 0) | (withIndex ? 4 : 0)], idSize === 2 ? u16(model.items.length) : u32(model.items.length), ...entries);
    const iinf = fullBox('iinf', 0, 0, u16(model.items.length), ...model.items.map((i) => i.infe));
    const pitm = fullBox('pitm', 0, 0, u16(model.primary));
    const iref = model.refs.length
      ? fullBox('iref', 0, 0, ...model.refs.map((r) => box(r.type, u16(r.from), u16(r.to.length), ...r.to.map(u16))))
      : [];
    const ipmaEntries = [...model.associations].sort(([a], [b]) => a - b).map(([id, values]) =>
      layout.wideIpma
        ? [...u32(id), values.length, ...values.flatMap(u16)]
        : [...u16(id), values.length, ...values.map((v) => ((v & 0x8000) >> 8) | (v & 0x7f))],
    );
    const ipma = fullBox('ipma', layout.wideIpma ? 1 : 0, layout.wideIpma ? 1 : 0, u32(ipmaEntries.length), ...ipmaEntries);
    const iprp = box('iprp', box('ipco', ...model.properties), ipma);
    const idat = idatData.length ? box('idat', idatData) : [];
    return fullBox('meta', 0, 0, model.hdlr, iloc, iinf, pitm, iref, iprp, idat, ...(layout.extraMeta ?? []));
  };

  const extra = (layout.extraTop ?? []).flat();
  if (layout.mdatFirst) {
    const payload = model.ftyp.length + extra.length + mdatHeaderSize;
    return new Uint8Array([...model.ftyp, ...extra, ...mdatBox(payload), ...metaBox(payload)]);
  }
  const metaLength = metaBox(0).length;
  const payload = model.ftyp.length + extra.length + metaLength + mdatHeaderSize;
  return new Uint8Array([...model.ftyp, ...extra, ...metaBox(payload), ...mdatBox(payload)]);
}

/**
 * Adds an Exif and an XMP item (cdsc to the primary) and an ICC colr as property 1, plus an nclx colr
 * as property 2 when the file has no colr yet (an item may have only one of each kind).
 */
function withMetadata(model: Model, options: { metadataInIdat?: boolean; rICC?: boolean } = {}): Model {
  const ids = model.items.map((i) => i.id);
  const exifId = Math.max(...ids) + 1;
  const xmpId = exifId + 1;
  const hasColr = model.properties.some((p) => type4(new Uint8Array(p), 4) === 'colr');
  const added = [colr(options.rICC ? 'rICC' : 'prof', ICC_PAYLOAD), ...(hasColr ? [] : [NCLX])];
  const shift = (v: number) => (v & 0x8000) | ((v & 0x7fff) + added.length);
  const associations = new Map([...model.associations].map(([id, values]) => [id, values.map(shift)]));
  associations.set(model.primary, [0x8000 | 1, ...(hasColr ? [] : [2]), ...(associations.get(model.primary) ?? [])]);
  return {
    ...model,
    items: [
      ...model.items,
      { id: exifId, infe: infe(exifId, 'Exif', 'Exif'), data: EXIF_PAYLOAD, inIdat: options.metadataInIdat },
      { id: xmpId, infe: infe(xmpId, 'mime', 'XMP', 'application/rdf+xml'), data: XMP_PAYLOAD, inIdat: options.metadataInIdat },
    ],
    properties: [...added, ...model.properties],
    associations,
    refs: [...model.refs, { type: 'cdsc', from: exifId, to: [model.primary] }, { type: 'cdsc', from: xmpId, to: [model.primary] }],
  };
}

// ---------------------------------------------------------------------------------------------
// Checks

const latin1 = (bytes: Uint8Array) => new TextDecoder('latin1').decode(bytes);

/** Structure of a stripped file: no metadata left, every reference resolvable, image data unchanged. */
function expectCleanStrip(input: Uint8Array, output: Uint8Array, label: string): Parsed {
  const before = parse(input);
  const after = parse(output);
  expect(['ftyp meta', 'ftyp meta mdat'], label).toContain(after.top.map((b) => b.type).join(' '));
  expect(after.top.at(-1)!.end, `${label}: boxes fill the file`).toBe(output.length);
  expect(after.items.filter((i) => i.type === 'Exif' || i.type === 'mime'), label).toEqual([]);
  expect(after.properties.filter((p) => p.type === 'colr' && ['prof', 'rICC'].includes(type4(output, p.body))), label).toEqual([]);
  expect(latin1(output), label).not.toMatch(/SECRET|Exif\0|xmpmeta|rdf:RDF/);
  const ids = new Set(after.items.map((i) => i.id));
  expect(ids.has(after.primary), label).toBe(true);
  for (const ref of after.refs) expect([ref.from, ...ref.to].every((id) => ids.has(id)), `${label}: iref ${ref.type}`).toBe(true);
  for (const [id, values] of after.associations) {
    expect(ids.has(id), `${label}: ipma item ${id}`).toBe(true);
    for (const v of values) expect((v & 0x7fff) >= 1 && (v & 0x7fff) <= after.properties.length, `${label}: ipma index`).toBe(true);
  }
  const mdat = after.top.find((b) => b.type === 'mdat');
  // The new mdat holds exactly the kept items' data: nothing of the removed items is left behind.
  const keptLength = [...after.locations.values()].filter((l) => l.method === 0).flatMap((l) => l.extents).reduce((n, e) => n + e.length, 0);
  expect(mdat ? mdat.end - mdat.body : 0, `${label}: mdat payload`).toBe(keptLength);
  for (const item of after.items) {
    const location = after.locations.get(item.id)!;
    for (const { offset, length } of location.extents) {
      if (location.method === 0) expect(offset >= mdat!.body && offset + length <= mdat!.end, `${label}: extent in mdat`).toBe(true);
      else expect(offset + length <= after.idat!.end - after.idat!.body, `${label}: extent in idat`).toBe(true);
    }
    // Kept items (image data, grid descriptions) are byte for byte the same.
    expect(sameBytes(itemData(output, after, item.id), itemData(input, before, item.id)), `${label}: item ${item.id} data`).toBe(true);
    // Kept properties of kept items are the same boxes, in the same order.
    const props = (p: Parsed, bytes: Uint8Array, values: number[]) =>
      values.map((v) => [v & 0x8000, latin1(bytes.subarray(p.properties[(v & 0x7fff) - 1].start, p.properties[(v & 0x7fff) - 1].end))]);
    const kept = (before.associations.get(item.id) ?? []).filter((v) => {
      const box = before.properties[(v & 0x7fff) - 1];
      return !(box.type === 'colr' && ['prof', 'rICC'].includes(type4(input, box.body)));
    });
    expect(props(after, output, after.associations.get(item.id) ?? []), `${label}: item ${item.id} properties`).toEqual(props(before, input, kept));
  }
  expect(readDimensions('avif', output), label).toEqual(readDimensions('avif', input));
  expect(readOrientation('avif', output), label).toBe(readOrientation('avif', input));
  return after;
}

const decode = (bytes: Uint8Array): Promise<RgbaImage> => decodeRgba('avif', bytes);

async function expectSamePixels(a: Uint8Array, b: Uint8Array, label: string): Promise<void> {
  const [x, y] = await Promise.all([decode(a), decode(b)]);
  expect([y.width, y.height], label).toEqual([x.width, x.height]);
  expect(sameBytes(x.data, y.data), `${label}: pixels differ`).toBe(true);
}

const SMALL = 'avif/fox.profile0.8bpc.yuv420.avif';

describe('stripAvif', () => {
  it('strips every corpus AVIF to the same pixels, without ICC colr (photo-12mp carries colr rICC)', async () => {
    for (const path of Object.keys(AVIFS)) {
      const input = await corpus(path);
      const output = stripped('avif', input);
      expectCleanStrip(input, output, path);
      if (path.startsWith('photos/')) {
        const icc = parse(input).properties.filter((p) => p.type === 'colr');
        expect(icc.map((p) => type4(input, p.body))).toEqual(['rICC']);
        expect(input.length - output.length, 'the ICC box is gone').toBeGreaterThanOrEqual(icc[0].end - icc[0].start);
        continue; // decoded in its own test below
      }
      await expectSamePixels(input, output, path);
      expect(sameBytes(stripped('avif', output), output), `${path}: stripping twice changes nothing`).toBe(true);
    }
  }, 30_000);

  it('keeps the pixels of the 12 MP photo exactly', async () => {
    const input = await corpus('photos/photo-12mp.avif');
    await expectSamePixels(input, stripped('avif', input), 'photo-12mp');
  }, 60_000);

  it('the test builder round-trips a corpus file (sanity check of the fixtures)', async () => {
    const input = await corpus(SMALL);
    const rebuilt = compose(decompose(input));
    expect(readDimensions('avif', rebuilt)).toEqual(readDimensions('avif', input));
    await expectSamePixels(input, rebuilt, 'rebuilt');
  });

  const layouts: [string, Layout, { metadataInIdat?: boolean; rICC?: boolean; primaryInIdat?: boolean }][] = [
    ['plain layout', {}, {}],
    ['metadata in idat (construction method 1), iloc v1', { ilocVersion: 1 }, { metadataInIdat: true }],
    ['primary image data in idat, metadata in mdat', { ilocVersion: 1 }, { primaryInIdat: true }],
    ['iloc v2 (32-bit item IDs), rICC', { ilocVersion: 2 }, { rICC: true }],
    ['ipma v1 with 15-bit indices', { wideIpma: true }, {}],
    ['mdat before meta, 64-bit mdat size', { mdatFirst: true, mdatHeader: 'large' }, {}],
    ['mdat of size 0 (to the end), extents split and reversed', { mdatHeader: 'to-end', extents: 3 }, {}],
    ['free, uuid and unknown top-level boxes, free and xml in meta', {
      extraTop: [box('free', [0, 0, 0]), box('uuid', [...new Array(16).fill(7), ...text('SECRET-UUID')]), box('abcd', [1])],
      extraMeta: [box('free', []), fullBox('xml ', 0, 0, text('<SECRET/>'))],
    }, { metadataInIdat: true }],
  ];

  it.each(layouts)('removes an Exif item, an XMP item and ICC colr: %s', async (_label, layout, options) => {
    const source = await corpus(SMALL);
    const model = withMetadata(decompose(source), options);
    if (options.primaryInIdat) model.items[0].inIdat = true;
    const input = compose(model, { ...layout, ilocVersion: layout.ilocVersion ?? (options.metadataInIdat || options.primaryInIdat ? 1 : 0) });
    // The input really carries everything that must go.
    const parsedInput = parse(input);
    expect(parsedInput.items.map((i) => i.type)).toEqual(['av01', 'Exif', 'mime']);
    expect(parsedInput.refs.map((r) => r.type)).toEqual(['cdsc', 'cdsc']);
    expect(sameBytes(itemData(input, parsedInput, 2), EXIF_PAYLOAD)).toBe(true);
    expect(sameBytes(itemData(input, parsedInput, 3), XMP_PAYLOAD)).toBe(true);

    const output = stripped('avif', input);
    const parsed = expectCleanStrip(input, output, _label);
    expect(parsed.items.map((i) => i.type)).toEqual(['av01']);
    expect(parsed.refs).toEqual([]);
    expect(findBox(output, parsed.meta, 'iref', 4), 'an empty iref is dropped').toBeNull();
    expect(parsed.properties.map((p) => p.type)).toEqual(['colr', ...decompose(source).properties.map((p) => type4(new Uint8Array(p), 4))]);
    expect(type4(output, parsed.properties[0].body), 'nclx colr kept').toBe('nclx');
    expect(parsed.associations.get(1)?.[0], 'nclx is property 1 after renumbering').toBe(1);
    expect(parsed.idat !== null, 'idat only when kept data lives there').toBe(!!options.primaryInIdat);
    // (Not compared with `source`: the added nclx colr changes how the YUV samples convert to RGB.)
    await expectSamePixels(input, output, _label);
  });

  it('rewrites iloc base offsets and extent indices into plain offsets (which the decoder then reads)', async () => {
    const source = await corpus(SMALL);
    const model = withMetadata(decompose(source), { metadataInIdat: true });
    const plain = compose(model, { ilocVersion: 1 });
    for (const ilocVersion of [1, 2] as const) {
      const input = compose(model, { ilocVersion, ilocExtras: true, extents: 2 });
      const iloc = findBox(input, parse(input).meta, 'iloc', 4)!;
      expect(input[iloc.body + 5], 'base_offset_size 4, index_size 4').toBe(0x44);
      // Our container parser reads these fields (libavif refused them): the same pixels as the plain file.
      await expectSamePixels(plain, input, `iloc v${ilocVersion} before the strip`);
      const output = stripped('avif', input);
      expectCleanStrip(input, output, `iloc v${ilocVersion}`);
      const outIloc = findBox(output, parse(output).meta, 'iloc', 4)!;
      expect(output[outIloc.body], 'iloc version kept').toBe(ilocVersion);
      expect(output[outIloc.body + 5]).toBe(0);
      await expectSamePixels(plain, output, `iloc v${ilocVersion}`);
    }
  });

  it('drops only the removed targets of a multi-target reference, and keeps other references', async () => {
    const model = withMetadata(decompose(await corpus(SMALL)));
    // A second (thumbnail-like) reference from the primary to itself-plus-Exif, and one Exif -> [XMP, primary].
    model.refs.push({ type: 'thmb', from: 1, to: [2, 1] }, { type: 'cdsc', from: 3, to: [2, 1] });
    const input = compose(model);
    const output = stripped('avif', input);
    expect(parse(output).refs).toEqual([{ type: 'thmb', from: 1, to: [1] }]);
  });

  it('keeps an alpha auxiliary item (auxl) and its properties', async () => {
    // A 96x64 RGBA image with real transparency, encoded by the service's own AVIF encoder.
    const width = 96;
    const height = 64;
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) data.set([i % 251, (i * 7) % 256, (i * 13) % 256, (i % width) * 2], i * 4);
    const encoded = await encodeWith('avif', { data, width, height }, 70);
    const plain = parse(encoded);
    expect(plain.refs.map((r) => r.type)).toContain('auxl');
    const input = compose(withMetadata(decompose(encoded)), { ilocVersion: 1 });
    const output = stripped('avif', input);
    const parsed = expectCleanStrip(input, output, 'alpha');
    expect(parsed.items.map((i) => i.type)).toEqual(['av01', 'av01']);
    expect(parsed.refs.map((r) => r.type)).toEqual(['auxl']);
    await expectSamePixels(encoded, output, 'alpha');
  });

  it('keeps irot and imir, so the stripped file still displays the same way', async () => {
    const model = decompose(await corpus(SMALL));
    model.properties.push(irot(1), imir(0));
    model.associations.get(1)!.push(0x8000 | (model.properties.length - 1), 0x8000 | model.properties.length);
    const input = compose(withMetadata(model));
    expect(readOrientation('avif', input)).toBe(5);
    const output = stripped('avif', input);
    expectCleanStrip(input, output, 'rotated');
    expect(readOrientation('avif', output)).toBe(5);
    await expectSamePixels(input, output, 'rotated');
  });

  it('handles an image sequence: chunk offsets follow the media data', async () => {
    const source = await corpus(SMALL);
    const model = withMetadata(decompose(source));
    const still = compose(model);
    const sequence = withTrack(still, model.items[0].data, 2);
    const output = stripped('avif', sequence);
    const top = [...isoBoxes(output, 0, output.length)].map((b) => b.type);
    expect(top).toEqual(['ftyp', 'meta', 'moov', 'mdat']);
    expect(latin1(output)).not.toMatch(/SECRET/);
    const chunks = chunkRanges(output);
    expect(chunks).toHaveLength(2);
    for (const { offset, length } of chunks) {
      expect(sameBytes(output.subarray(offset, offset + length), model.items[0].data), 'sample bytes at the new chunk offset').toBe(true);
    }
    await expectSamePixels(sequence, output, 'sequence');

    // Without meta (a bare avis): only the track and its samples remain.
    const boxes = [...isoBoxes(sequence, 0, sequence.length)];
    const bare = new Uint8Array(boxes.filter((b) => b.type !== 'meta').flatMap((b) => raw(sequence, b)));
    const bareOutput = stripped('avif', bare);
    expect([...isoBoxes(bareOutput, 0, bareOutput.length)].map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(bareOutput.length, 'the still image data after the samples is gone').toBe(bare.length - (boxes.at(-1)!.end - boxes.at(-1)!.start));
    expect(readDimensions('avif', bareOutput)).toEqual(readDimensions('avif', bare));
    for (const { offset, length } of chunkRanges(bareOutput)) {
      expect(sameBytes(bareOutput.subarray(offset, offset + length), model.items[0].data)).toBe(true);
    }
    // The decoder reads a bare sequence's first sample (decisions.md: the first frame).
    await expectSamePixels(bare, bareOutput, 'bare sequence');
  });

  it('rejects files it cannot rewrite with UNSUPPORTED_FORMAT', async () => {
    const model = decompose(await corpus(SMALL));
    const exifPrimary = { ...model, items: [{ ...model.items[0], infe: infe(1, 'Exif', '') }] };
    /** The composed plain file with one iloc field patched (v0 entry: id, dri, base, count, offset, length). */
    const patchedIloc = (field: 'dri' | 'length', value: number) => {
      const bytes = compose(model);
      const iloc = findBox(bytes, parse(bytes).meta, 'iloc', 4)!;
      const at = iloc.body + 8 + (field === 'dri' ? 2 : 14);
      bytes.set(field === 'dri' ? u16(value) : u32(be32(bytes, at) + value), at);
      return bytes;
    };
    const cases: [string, Uint8Array][] = [
      ['primary is a metadata item', compose(exifPrimary)],
      ['ipma index past ipco', compose({ ...model, associations: new Map([[1, [0x8000 | 9]]]) })],
      ['extent past the end of the file', patchedIloc('length', 1000)],
      ['data in another file (data_reference_index 1)', patchedIloc('dri', 1)],
      ['cut inside mdat', compose(model).subarray(0, 5000)],
      ['no meta and no moov', new Uint8Array([...model.ftyp, ...box('mdat', [1, 2, 3])])],
      ['infe version 1', compose({ ...model, items: [{ ...model.items[0], infe: fullBox('infe', 1, 0, u16(1), u16(0), text('\0\0\0')) }] })],
      ['two iloc boxes', compose(model, { extraMeta: [fullBox('iloc', 0, 0, [0x44, 0], u16(0))] })],
    ];
    for (const [label, input] of cases) {
      try {
        expectAppError(() => stripped('avif', input), 'UNSUPPORTED_FORMAT');
      } catch (error) {
        throw new Error(`${label}: ${error}`);
      }
    }
  });

  it('gives a sound file or UNSUPPORTED_FORMAT for every prefix', async () => {
    const input = compose(withMetadata(decompose(await corpus(SMALL))), { ilocVersion: 1 });
    for (const n of prefixLengths(input.length, 700, 32)) {
      const output = resultOrAppError(() => stripped('avif', input.subarray(0, n)));
      expect(output, `prefix ${n}`).toBeUndefined(); // the mdat size always tells a prefix is short
    }
  });

  it('only ever returns bytes or throws UNSUPPORTED_FORMAT (mutated input), quickly', async () => {
    const small = await corpus(SMALL);
    const synthetic = compose(withMetadata(decompose(small)), { ilocVersion: 1, extents: 2 });
    const sequence = withTrack(compose(withMetadata(decompose(small))), decompose(small).items[0].data, 2);
    const started = Date.now();
    fc.assert(
      fc.property(fc.oneof(mutated(small, 320), mutated(synthetic, 700), mutated(sequence, 1200)), (bytes) => {
        const output = resultOrAppError(() => stripped('avif', bytes));
        if (output) {
          expect(output.length).toBeLessThanOrEqual(2 * bytes.length);
          expect(readDimensions('avif', output)).toEqual(readDimensions('avif', bytes));
        }
      }),
      { numRuns: 300 },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

// ---------------------------------------------------------------------------------------------
// A minimal AVIF sequence track (avis) around an existing still file: `count` samples, one per
// chunk, each a copy of the primary item's AV1 data in a second mdat placed before the first.

function withTrack(still: Uint8Array, sample: Uint8Array, count: number): Uint8Array {
  const top = [...isoBoxes(still, 0, still.length)];
  const meta = top.find((b) => b.type === 'meta')!;
  const ipco = findBox(still, findBox(still, meta, 'iprp', 4)!, 'ipco')!;
  const av1C = [...isoBoxes(still, ipco.body, ipco.end)].find((b) => b.type === 'av1C')!;
  const ispe = [...isoBoxes(still, ipco.body, ipco.end)].find((b) => b.type === 'ispe')!;
  const width = be32(still, ispe.body + 4);
  const height = be32(still, ispe.body + 8);
  const ftyp = box('ftyp', text('avis'), u32(0), text('avifavismsf1iso8mif1miafMA1A'));
  const matrix = [...u32(0x10000), ...u32(0), ...u32(0), ...u32(0), ...u32(0x10000), ...u32(0), ...u32(0), ...u32(0), ...u32(0x40000000)];
  const sampleEntry = box('av01', new Array(6).fill(0), u16(1), new Array(16).fill(0), u16(width), u16(height), u32(0x480000), u32(0x480000), u32(0), u16(1), new Array(32).fill(0), u16(24), u16(0xffff), raw(still, av1C));
  const stbl = (chunkOffsets: number[]) =>
    box(
      'stbl',
      fullBox('stsd', 0, 0, u32(1), sampleEntry),
      fullBox('stts', 0, 0, u32(1), u32(count), u32(1)),
      fullBox('stss', 0, 0, u32(count), ...Array.from({ length: count }, (_, i) => u32(i + 1))),
      fullBox('stsc', 0, 0, u32(1), u32(1), u32(1), u32(1)),
      fullBox('stsz', 0, 0, u32(0), u32(count), ...Array.from({ length: count }, () => u32(sample.length))),
      fullBox('stco', 0, 0, u32(chunkOffsets.length), ...chunkOffsets.map(u32)),
    );
  const moov = (chunkOffsets: number[]) =>
    box(
      'moov',
      fullBox('mvhd', 0, 0, u32(0), u32(0), u32(10), u32(count), u32(0x10000), u16(0x100), u16(0), u32(0), u32(0), matrix, new Array(24).fill(0), u32(2)),
      box(
        'trak',
        fullBox('tkhd', 0, 1, u32(0), u32(0), u32(1), u32(0), u32(count), u32(0), u32(0), u16(0), u16(0), u16(0), u16(0), matrix, u32(width * 0x10000), u32(height * 0x10000)),
        box(
          'mdia',
          fullBox('mdhd', 0, 0, u32(0), u32(0), u32(10), u32(count), u16(0x55c4), u16(0)),
          fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]),
          box('minf', fullBox('vmhd', 0, 1, new Array(8).fill(0)), box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))), stbl(chunkOffsets)),
        ),
      ),
    );
  const rest = top.slice(1).flatMap((b) => raw(still, b));
  const samples = Array.from({ length: count }, () => Array.from(sample)).flat();
  // Layout: ftyp, moov, mdat (samples), then the still file's meta and mdat, whose iloc offsets shift.
  const head = ftyp.length + moov([]).length + count * 4;
  const sampleStart = head + 8;
  const moovBytes = moov(Array.from({ length: count }, (_, i) => sampleStart + i * sample.length));
  const shift = ftyp.length + moovBytes.length + 8 + samples.length - top[0].end;
  const tail = new Uint8Array(rest);
  shiftIloc(tail, meta.start - top[0].end, shift);
  return new Uint8Array([...ftyp, ...moovBytes, ...box('mdat', samples), ...tail]);
}

/** Adds `shift` to the base offsets of a composed file's iloc (method 0 items; base_offset_size 4). */
function shiftIloc(bytes: Uint8Array, metaAt: number, shift: number): void {
  const meta = [...isoBoxes(bytes, metaAt, bytes.length)][0];
  const iloc = findBox(bytes, meta, 'iloc', 4)!;
  const version = bytes[iloc.body];
  expect(bytes[iloc.body + 5] >> 4).toBe(4);
  let at = iloc.body + 6;
  const count = version < 2 ? be16(bytes, at) : be32(bytes, at);
  at += version < 2 ? 2 : 4;
  const indexSize = version > 0 ? bytes[iloc.body + 5] & 15 : 0;
  for (let i = 0; i < count; i++) {
    at += (version < 2 ? 2 : 4) + (version > 0 ? 2 : 0);
    const method = version > 0 ? be16(bytes, at - 2) & 15 : 0;
    at += 2;
    if (method === 0) bytes.set(u32(be32(bytes, at) + shift), at);
    at += 4;
    const n = be16(bytes, at);
    at += 2 + n * (indexSize + 8);
  }
}

/** Chunk ranges of the first track of a file (stco, stsz with one sample per chunk). */
function chunkRanges(bytes: Uint8Array): { offset: number; length: number }[] {
  let b: IsoBox | null = findBox(bytes, { body: 0, end: bytes.length }, 'moov');
  for (const type of ['trak', 'mdia', 'minf', 'stbl']) b = b && findBox(bytes, b, type);
  const stco = findBox(bytes, b!, 'stco')!;
  const stsz = findBox(bytes, b!, 'stsz')!;
  return Array.from({ length: be32(bytes, stco.body + 4) }, (_, i) => ({
    offset: be32(bytes, stco.body + 8 + i * 4),
    length: be32(bytes, stsz.body + 12 + i * 4),
  }));
}
