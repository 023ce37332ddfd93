import { concat, damaged, fourCC, u16be, u32be, u8 } from '../../bytes';
import { findBox, isoBoxes, readAvifDimensions, type IsoBox } from './header';

/**
 * Lossless metadata removal for AVIF (HEIF/MIAF): a container-level rewrite, no decode.
 *
 * Removed: metadata items (`Exif`, every `mime` item such as XMP `application/rdf+xml`, `uri `)
 * with their `iinf`/`iloc` entries, their `iref` references and their data; ICC `colr` properties
 * (`prof`, `rICC`) with their `ipma` associations; `free`/`skip`/`xml `/`bxml` boxes in `meta`; every
 * top-level box other than `ftyp`, `meta`, `moov` and the media data.
 *
 * Kept: every other item and property (`nclx` colr, `irot`, `imir`, `clap`, `pasp`, `pixi`, `av1C`,
 * `auxC`, ...), `pitm`, `hdlr`, `dinf`, `grpl` and the sample tables of an image sequence.
 *
 * The output is `ftyp`, the new `meta`, `moov` (if any) and one new `mdat` holding exactly the bytes
 * that kept items and sequence samples refer to (copied byte for byte, overlaps copied once); `idat`
 * is rebuilt the same way. Every kept `iloc` extent and every `stco`/`co64` chunk offset is rewritten
 * to its new place, `ipma` property indices are renumbered and every box size is recomputed.
 *
 * Anything this cannot follow with confidence throws `damaged` (AppError UNSUPPORTED_FORMAT).
 */
export function stripAvif(bytes: Uint8Array): Uint8Array {
  readAvifDimensions(bytes); // leading ftyp, sound boxes up to meta and a size, or `damaged`
  const top = [...isoBoxes(bytes, 0, bytes.length)];
  const ftyp = top[0];
  const meta = top.find((b) => b.type === 'meta') ?? null;
  const moov = top.find((b) => b.type === 'moov') ?? null;
  if (!meta && !moov) throw damaged('avif: neither meta nor moov');

  const media = new Relocation(bytes.length);
  const parsedMeta = meta ? parseMeta(bytes, meta, media) : null;
  const chunks = moov ? sampleChunks(bytes, moov, media) : [];
  media.finish();
  parsedMeta?.idat.finish();

  // Widths of the rewritten offsets: fixed before layout (the output is at most about twice the input).
  const wide = bytes.length * 2 > 0xffffffff;
  const mdatHeader = media.total + 8 > 0xffffffff ? 16 : 8;
  const ftypBytes = copyBox(bytes, ftyp);
  const metaSize = parsedMeta ? writeMeta(bytes, parsedMeta, 0, wide).length : 0;
  const moovSize = moov ? copyBox(bytes, moov).length : 0;
  const mdatStart = ftypBytes.length + metaSize + moovSize;
  const dataStart = mdatStart + mdatHeader;

  const parts = [ftypBytes];
  if (parsedMeta) parts.push(writeMeta(bytes, parsedMeta, dataStart, wide));
  if (moov) parts.push(writeMoov(bytes, moov, chunks, media, dataStart));
  if (media.total > 0) parts.push(boxHeader('mdat', media.total), ...media.copy(bytes));
  const output = concat(parts);
  readAvifDimensions(output); // self-check of the rewritten structure
  return output;
}

/** Item types that only carry metadata. */
const METADATA_ITEM_TYPES = new Set(['Exif', 'mime', 'uri ']);
/** `colr` colour types that carry an ICC profile (`nclx` only signals CICP values and is kept). */
const ICC_COLOUR_TYPES = new Set(['prof', 'rICC']);
/** `meta` children dropped without replacement. */
const DROPPED_META_CHILDREN = new Set(['free', 'skip', 'xml ', 'bxml']);

interface Extent {
  offset: number;
  length: number;
}

interface Location {
  id: number;
  /** iloc construction_method: 0 = file offsets, 1 = idat offsets (2, item offsets, is refused). */
  method: number;
  dataReference: number;
  extents: Extent[];
  /** Where the kept extents are registered (media for method 0, idat for method 1). */
  target?: Relocation;
}

interface ParsedMeta {
  meta: IsoBox;
  removed: Set<number>;
  /** Kept `iloc` entries; their extents are handles of `target`. */
  locations: Location[];
  ilocVersion: number;
  idat: Relocation;
}

/**
 * Reads what the rewrite needs from `meta`: which items go, where kept items' data lies (registered
 * in `media` or the idat relocation), and checks that the primary item is not a metadata item.
 */
function parseMeta(bytes: Uint8Array, meta: IsoBox, media: Relocation): ParsedMeta {
  const r = reader(bytes, meta);
  if (r.u8(meta.body) !== 0) throw damaged('avif: meta version');
  const children = [...isoBoxes(bytes, meta.body + 4, meta.end)];
  const one = (type: string): IsoBox | null => {
    const found = children.filter((b) => b.type === type);
    if (found.length > 1) throw damaged(`avif: ${found.length} ${type} boxes in meta`);
    return found[0] ?? null;
  };
  const iinf = one('iinf');
  const items = iinf ? parseIinf(bytes, iinf) : new Map<number, string>();
  const removed = new Set([...items].filter(([, type]) => METADATA_ITEM_TYPES.has(type)).map(([id]) => id));

  const pitm = one('pitm');
  if (pitm) {
    const p = reader(bytes, pitm);
    const version = p.u8(pitm.body);
    const primary = version === 0 ? p.u16(pitm.body + 4) : p.u32(pitm.body + 4);
    if (removed.has(primary)) throw damaged('avif: the primary item is a metadata item');
  }

  const idatBox = one('idat');
  const idat = new Relocation(idatBox ? idatBox.end - idatBox.body : 0);
  const iloc = one('iloc');
  const parsed = iloc ? parseIloc(bytes, iloc) : { version: 0, locations: [] };
  const locations: Location[] = [];
  for (const location of parsed.locations) {
    if (removed.has(location.id)) continue; // its data is simply not copied
    if (location.dataReference !== 0) throw damaged(`avif: item ${location.id} data in another file`);
    if (location.method > 1) throw damaged(`avif: item ${location.id} construction method ${location.method}`);
    if (location.method === 1 && !idatBox) throw damaged('avif: construction method 1 without idat');
    const target = location.method === 0 ? media : idat;
    location.target = target;
    // extent_length 0 means "to the end of the source"; an empty extent cannot be written back.
    location.extents = location.extents.map(({ offset, length }) => target.add(offset, length === 0 ? target.sourceLength - offset : length));
    locations.push(location);
  }
  return { meta, removed, locations, ilocVersion: parsed.version, idat };
}

/** Item ID -> item type of every `infe` (versions 2 and 3, the only ones AVIF readers accept). */
function parseIinf(bytes: Uint8Array, iinf: IsoBox): Map<number, string> {
  const r = reader(bytes, iinf);
  const version = r.u8(iinf.body);
  const count = version === 0 ? r.u16(iinf.body + 4) : r.u32(iinf.body + 4);
  const entries = [...isoBoxes(bytes, iinf.body + (version === 0 ? 6 : 8), iinf.end)];
  if (entries.length !== count || entries.some((b) => b.type !== 'infe')) throw damaged('avif: iinf entries');
  const items = new Map<number, string>();
  for (const infe of entries) {
    const e = reader(bytes, infe);
    const v = e.u8(infe.body);
    if (v !== 2 && v !== 3) throw damaged(`avif: infe version ${v}`);
    const id = v === 2 ? e.u16(infe.body + 4) : e.u32(infe.body + 4);
    const type = e.fourCC(infe.body + (v === 2 ? 8 : 10));
    if (items.has(id)) throw damaged(`avif: item ${id} declared twice`);
    items.set(id, type);
  }
  return items;
}

/** Every `iloc` entry with base offsets applied and "length 0 = to the end" resolved (not yet checked). */
function parseIloc(bytes: Uint8Array, iloc: IsoBox): { version: number; locations: Location[] } {
  const r = reader(bytes, iloc);
  let at = iloc.body;
  const version = r.u8(at);
  if (version > 2) throw damaged(`avif: iloc version ${version}`);
  const sizes = r.u8(at + 4);
  const sizes2 = r.u8(at + 5);
  const offsetSize = sizes >> 4;
  const lengthSize = sizes & 15;
  const baseSize = sizes2 >> 4;
  const indexSize = version >= 1 ? sizes2 & 15 : 0;
  at += 6;
  const count = version < 2 ? r.u16(at) : r.u32(at);
  at += version < 2 ? 2 : 4;
  const locations: Location[] = [];
  const seen = new Set<number>();
  let extentTotal = 0;
  for (let i = 0; i < count; i++) {
    const id = version < 2 ? r.u16(at) : r.u32(at);
    at += version < 2 ? 2 : 4;
    let method = 0;
    if (version >= 1) {
      method = r.u16(at) & 15;
      at += 2;
    }
    const dataReference = r.u16(at);
    const base = r.uint(at + 2, baseSize);
    at += 2 + baseSize;
    const extentCount = r.u16(at);
    at += 2;
    // Zero-width fields make extents free to declare: bound them by the file so output stays small.
    extentTotal += extentCount;
    if (extentTotal * 8 > bytes.length) throw damaged('avif: more iloc extents than the file can hold');
    const extents: Extent[] = [];
    for (let e = 0; e < extentCount; e++) {
      at += indexSize; // extent_index only matters for construction method 2
      const offset = base + r.uint(at, offsetSize);
      const length = r.uint(at + offsetSize, lengthSize);
      at += offsetSize + lengthSize;
      extents.push({ offset, length });
    }
    if (seen.has(id)) throw damaged(`avif: iloc lists item ${id} twice`);
    seen.add(id);
    locations.push({ id, method, dataReference, extents });
  }
  return { version, locations };
}

interface Chunk {
  /** Where the chunk offset is stored in the input. */
  at: number;
  size: 4 | 8;
  /** Handle in `media`, or null for an empty chunk. */
  extent: Extent | null;
}

/**
 * The byte ranges of every chunk of every track (moov/trak/mdia/minf/stbl: stco or co64, with stsc
 * and stsz for the chunk lengths), registered in `media`; returns where each chunk offset is stored.
 */
function sampleChunks(bytes: Uint8Array, moov: IsoBox, media: Relocation): Chunk[] {
  const chunks: Chunk[] = [];
  for (const trak of isoBoxes(bytes, moov.body, moov.end)) {
    if (trak.type !== 'trak') continue;
    let stbl: IsoBox | null = trak;
    for (const type of ['mdia', 'minf', 'stbl']) stbl = stbl && findBox(bytes, stbl, type);
    if (!stbl) continue;
    const stco = findBox(bytes, stbl, 'stco');
    const co64 = findBox(bytes, stbl, 'co64');
    if (stco && co64) throw damaged('avif: both stco and co64');
    const offsets = stco ?? co64;
    if (!offsets) continue;
    const width = stco ? 4 : 8;
    const o = reader(bytes, offsets);
    const chunkCount = o.u32(offsets.body + 4);
    if (chunkCount === 0) continue;
    if (chunkCount * width > offsets.end - offsets.body - 8) throw damaged('avif: chunk count');
    if (findBox(bytes, stbl, 'stz2')) throw damaged('avif: stz2 sample sizes');
    const stsc = findBox(bytes, stbl, 'stsc');
    const stsz = findBox(bytes, stbl, 'stsz');
    if (!stsc || !stsz) throw damaged('avif: chunks without stsc/stsz');

    // stsc: runs of (first_chunk, samples_per_chunk, sample_description_index), first_chunk rising from 1.
    const c = reader(bytes, stsc);
    const runs = c.u32(stsc.body + 4);
    if (runs === 0 || runs * 12 > stsc.end - stsc.body - 8) throw damaged('avif: stsc entry count');
    const firstChunk = (run: number) => c.u32(stsc.body + 8 + run * 12);
    if (firstChunk(0) !== 1) throw damaged('avif: stsc does not start at chunk 1');
    for (let run = 1; run < runs; run++) if (firstChunk(run) <= firstChunk(run - 1)) throw damaged('avif: stsc order');

    const z = reader(bytes, stsz);
    const constantSize = z.u32(stsz.body + 4);
    const sampleCount = z.u32(stsz.body + 8);
    if (constantSize === 0 && sampleCount * 4 > stsz.end - stsz.body - 12) throw damaged('avif: stsz entry count');

    let sample = 0;
    let run = 0;
    for (let chunk = 1; chunk <= chunkCount; chunk++) {
      while (run + 1 < runs && firstChunk(run + 1) <= chunk) run++;
      const perChunk = c.u32(stsc.body + 8 + run * 12 + 4);
      if (perChunk > sampleCount - sample) throw damaged('avif: stsc names more samples than stsz');
      let length = constantSize * perChunk;
      if (constantSize === 0) for (let s = 0; s < perChunk; s++) length += z.u32(stsz.body + 12 + (sample + s) * 4);
      sample += perChunk;
      const at = offsets.body + 8 + (chunk - 1) * width;
      const offset = o.uint(at, width);
      chunks.push({ at, size: width, extent: length === 0 ? null : media.add(offset, length) });
    }
  }
  return chunks;
}

/** The new `meta`: children in their order, rewritten where items or properties went away. */
function writeMeta(bytes: Uint8Array, parsed: ParsedMeta, dataStart: number, wide: boolean): Uint8Array {
  const { meta, removed } = parsed;
  const parts: Uint8Array[] = [bytes.subarray(meta.body, meta.body + 4)];
  for (const child of isoBoxes(bytes, meta.body + 4, meta.end)) {
    if (DROPPED_META_CHILDREN.has(child.type)) continue;
    if (child.type === 'iinf') parts.push(writeIinf(bytes, child, removed));
    else if (child.type === 'iloc') parts.push(writeIloc(parsed, dataStart, wide));
    else if (child.type === 'iref') parts.push(writeIref(bytes, child, removed));
    else if (child.type === 'iprp') parts.push(writeIprp(bytes, child, removed));
    else if (child.type === 'idat') {
      // An empty idat goes, unless a kept item still names construction method 1 (with no extents):
      // without the box, stripping the output again would refuse it ("method 1 without idat").
      const needed = parsed.idat.total > 0 || parsed.locations.some((location) => location.method === 1);
      if (needed) parts.push(boxHeader('idat', parsed.idat.total), ...parsed.idat.copy(bytes.subarray(child.body, child.end)));
    } else {
      if (child.type === 'grpl') checkGroups(bytes, child, removed);
      parts.push(copyBox(bytes, child));
    }
  }
  return wrap('meta', parts);
}

function writeIinf(bytes: Uint8Array, iinf: IsoBox, removed: Set<number>): Uint8Array {
  const version = u8(bytes, iinf.body);
  const kept = [...isoBoxes(bytes, iinf.body + (version === 0 ? 6 : 8), iinf.end)].filter((infe) => {
    const v = u8(bytes, infe.body);
    return !removed.has(v === 2 ? u16be(bytes, infe.body + 4) : u32be(bytes, infe.body + 4));
  });
  const head = [...bytes.subarray(iinf.body, iinf.body + 4), ...(version === 0 ? be(kept.length, 2) : be(kept.length, 4))];
  return wrap('iinf', [new Uint8Array(head), ...kept.map((infe) => copyBox(bytes, infe))]);
}

/**
 * A fresh `iloc` of the same version: 4-byte (8 if `wide`) offsets and lengths, no base offset and
 * no extent index; method 0 extents point into the new mdat, method 1 extents into the new idat.
 */
function writeIloc(parsed: ParsedMeta, dataStart: number, wide: boolean): Uint8Array {
  const { ilocVersion: version, locations } = parsed;
  const field = wide ? 8 : 4;
  const out: number[] = [version, 0, 0, 0, (field << 4) | field, 0, ...be(locations.length, version < 2 ? 2 : 4)];
  for (const location of locations) {
    out.push(...be(location.id, version < 2 ? 2 : 4));
    if (version >= 1) out.push(0, location.method);
    out.push(0, 0, ...be(location.extents.length, 2)); // data_reference_index 0, no base offset
    for (const extent of location.extents) {
      const offset = (location.method === 0 ? dataStart : 0) + location.target!.moved(extent);
      out.push(...be(offset, field), ...be(extent.length, field));
    }
  }
  return wrap('iloc', [new Uint8Array(out)]);
}

/** `iref` without references from removed items or to them; null-sized reference boxes and an empty iref go. */
function writeIref(bytes: Uint8Array, iref: IsoBox, removed: Set<number>): Uint8Array {
  const r = reader(bytes, iref);
  const version = r.u8(iref.body);
  if (version > 1) throw damaged(`avif: iref version ${version}`);
  const idSize = version === 0 ? 2 : 4;
  const id = (at: number) => (idSize === 2 ? r.u16(at) : r.u32(at));
  const kept: Uint8Array[] = [];
  for (const ref of isoBoxes(bytes, iref.body + 4, iref.end)) {
    const from = id(ref.body);
    const count = r.u16(ref.body + idSize);
    const to: number[] = [];
    for (let i = 0; i < count; i++) to.push(id(ref.body + idSize + 2 + i * idSize));
    if (ref.body + idSize + 2 + count * idSize !== ref.end) throw damaged('avif: iref entry size');
    const targets = to.filter((t) => !removed.has(t));
    if (removed.has(from) || targets.length === 0) continue;
    kept.push(wrap(ref.type, [new Uint8Array([...be(from, idSize), ...be(targets.length, 2), ...targets.flatMap((t) => be(t, idSize))])]));
  }
  if (kept.length === 0) return new Uint8Array(0);
  return wrap('iref', [bytes.subarray(iref.body, iref.body + 4), ...kept]);
}

/** `iprp` with ICC `colr` boxes gone from `ipco` and every `ipma` renumbered to match. */
function writeIprp(bytes: Uint8Array, iprp: IsoBox, removed: Set<number>): Uint8Array {
  const children = [...isoBoxes(bytes, iprp.body, iprp.end)];
  const ipcos = children.filter((b) => b.type === 'ipco');
  if (ipcos.length !== 1) throw damaged(`avif: ${ipcos.length} ipco boxes`);
  const properties = [...isoBoxes(bytes, ipcos[0].body, ipcos[0].end)];
  // newIndex[i] = new 1-based index of old property i (1-based), 0 = removed.
  const newIndex = [0];
  let next = 1;
  for (const property of properties) {
    const icc = property.type === 'colr' && ICC_COLOUR_TYPES.has(fourCC(bytes.subarray(0, property.end), property.body));
    newIndex.push(icc ? 0 : next++);
  }
  const parts = children.map((child) => {
    if (child.type === 'ipco') return wrap('ipco', properties.filter((_, i) => newIndex[i + 1] !== 0).map((p) => copyBox(bytes, p)));
    if (child.type === 'ipma') return writeIpma(bytes, child, removed, newIndex);
    return copyBox(bytes, child);
  });
  return wrap('iprp', parts);
}

function writeIpma(bytes: Uint8Array, ipma: IsoBox, removed: Set<number>, newIndex: number[]): Uint8Array {
  const r = reader(bytes, ipma);
  const version = r.u8(ipma.body);
  if (version > 1) throw damaged(`avif: ipma version ${version}`);
  const wideIndex = (r.u8(ipma.body + 3) & 1) === 1;
  const idSize = version === 0 ? 2 : 4;
  const count = r.u32(ipma.body + 4);
  let at = ipma.body + 8;
  const out: number[] = [...bytes.subarray(ipma.body, ipma.body + 4), 0, 0, 0, 0];
  let kept = 0;
  for (let e = 0; e < count; e++) {
    const id = idSize === 2 ? r.u16(at) : r.u32(at);
    const associations = r.u8(at + idSize);
    at += idSize + 1;
    const entry: number[] = [];
    let n = 0;
    for (let a = 0; a < associations; a++) {
      const raw = wideIndex ? r.u16(at) : r.u8(at);
      at += wideIndex ? 2 : 1;
      const essential = wideIndex ? raw & 0x8000 : raw & 0x80;
      const index = wideIndex ? raw & 0x7fff : raw & 0x7f;
      if (index >= newIndex.length) throw damaged(`avif: ipma index ${index} past ipco`);
      if (index !== 0 && newIndex[index] === 0) continue;
      const value = essential | (index === 0 ? 0 : newIndex[index]);
      entry.push(...(wideIndex ? be(value, 2) : [value]));
      n++;
    }
    if (removed.has(id)) continue;
    out.push(...be(id, idSize), n, ...entry);
    kept++;
  }
  out.splice(4, 4, ...be(kept, 4));
  return wrap('ipma', [new Uint8Array(out)]);
}

/** Entity groups naming a removed item cannot be rewritten safely (their payloads are type-specific). */
function checkGroups(bytes: Uint8Array, grpl: IsoBox, removed: Set<number>): void {
  for (const group of isoBoxes(bytes, grpl.body, grpl.end)) {
    const r = reader(bytes, group);
    const count = r.u32(group.body + 8);
    if (count * 4 > group.end - group.body - 12) throw damaged('avif: entity group size');
    for (let i = 0; i < count; i++) {
      if (removed.has(r.u32(group.body + 12 + i * 4))) throw damaged('avif: entity group names a metadata item');
    }
  }
}

/** `moov` copied with every chunk offset moved to where its bytes now lie. */
function writeMoov(bytes: Uint8Array, moov: IsoBox, chunks: Chunk[], media: Relocation, dataStart: number): Uint8Array {
  const out = copyBox(bytes, moov);
  const shift = out.length - (moov.end - moov.body) - moov.body; // new position = old position + shift
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (const { at, size, extent } of chunks) {
    const offset = dataStart + (extent ? media.moved(extent) : 0);
    if (size === 4) {
      if (offset > 0xffffffff) throw damaged('avif: chunk offset past 4 GiB in stco');
      view.setUint32(at + shift, offset);
    } else {
      view.setUint32(at + shift, Math.floor(offset / 2 ** 32));
      view.setUint32(at + shift + 4, offset >>> 0);
    }
  }
  return out;
}

/**
 * Byte ranges of a source (the file, or the idat payload) that the output keeps. Overlapping ranges
 * are merged and copied once, so the copy is never larger than the source; `add` checks a range and
 * returns a handle whose offset in the copy is known after `finish`.
 */
class Relocation {
  private handles: Extent[] = [];
  private ranges: { start: number; end: number; to: number }[] = [];
  private newOffsets = new Map<Extent, number>();
  /** Bytes in the copy. */
  total = 0;
  readonly sourceLength: number;

  constructor(sourceLength: number) {
    this.sourceLength = sourceLength;
  }

  add(offset: number, length: number): Extent {
    if (!(offset >= 0 && length > 0 && offset + length <= this.sourceLength)) {
      throw damaged(`avif: data range ${offset}+${length} outside ${this.sourceLength} bytes`);
    }
    const handle = { offset, length };
    this.handles.push(handle);
    return handle;
  }

  finish(): void {
    const sorted = [...this.handles].sort((a, b) => a.offset - b.offset);
    for (const { offset, length } of sorted) {
      const last = this.ranges.at(-1);
      if (last && offset <= last.end) last.end = Math.max(last.end, offset + length);
      else this.ranges.push({ start: offset, end: offset + length, to: 0 });
    }
    for (const range of this.ranges) {
      range.to = this.total;
      this.total += range.end - range.start;
    }
    for (const handle of this.handles) {
      let lo = 0;
      let hi = this.ranges.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.ranges[mid].start <= handle.offset) lo = mid;
        else hi = mid - 1;
      }
      const range = this.ranges[lo];
      this.newOffsets.set(handle, range.to + handle.offset - range.start);
    }
  }

  /** Offset in the copy of a handle from `add` (after `finish`). */
  moved(handle: Extent): number {
    const offset = this.newOffsets.get(handle);
    if (offset === undefined) throw new Error('Relocation.moved before finish');
    return offset;
  }

  copy(source: Uint8Array): Uint8Array[] {
    return this.ranges.map((r) => source.subarray(r.start, r.end));
  }
}

/** Bounds-checked readers limited to one box (reads past its end throw `damaged`). */
function reader(bytes: Uint8Array, box: IsoBox) {
  const inBox = bytes.subarray(0, box.end);
  return {
    u8: (at: number) => u8(inBox, at),
    u16: (at: number) => u16be(inBox, at),
    u32: (at: number) => u32be(inBox, at),
    fourCC: (at: number) => fourCC(inBox, at),
    /** An unsigned field of 0, 4 or 8 bytes (iloc sizes); values past 2^53 are refused. */
    uint(at: number, size: number): number {
      if (size === 0) return 0;
      if (size === 4) return u32be(inBox, at);
      if (size === 8) {
        const high = u32be(inBox, at);
        if (high >= 2 ** 21) throw damaged('avif: 64-bit value too large');
        return high * 2 ** 32 + u32be(inBox, at + 4);
      }
      throw damaged(`avif: field size ${size}`);
    },
  };
}

function be(value: number, size: number): number[] {
  const out: number[] = [];
  for (let i = size - 1; i >= 0; i--) out.push(Math.floor(value / 2 ** (8 * i)) & 0xff);
  return out;
}

/** A box header for a body of `bodyLength` bytes (64-bit size when needed). */
function boxHeader(type: string, bodyLength: number): Uint8Array {
  const codes = [...type].map((c) => c.charCodeAt(0));
  if (bodyLength + 8 <= 0xffffffff) return new Uint8Array([...be(bodyLength + 8, 4), ...codes]);
  return new Uint8Array([0, 0, 0, 1, ...codes, ...be(bodyLength + 16, 8)]);
}

function wrap(type: string, parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  return concat([boxHeader(type, length), ...parts]);
}

/** A box copied with a fresh header (size 0 "to the end" and needless 64-bit sizes become plain sizes). */
function copyBox(bytes: Uint8Array, box: IsoBox): Uint8Array {
  return wrap(box.type, [bytes.subarray(box.body, box.end)]);
}
