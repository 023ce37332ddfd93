import { concat, damaged, fourCC } from '../../bytes';
import type { IsoBox } from './boxes';
import type { AvifHeader } from './header';
import type { ItemLocation, MetaIndex, PropertyAssociations } from './meta';
import type { SampleChunk } from './tracks';

/**
 * Lossless metadata removal for AVIF (HEIF/MIAF): a container-level rewrite from the structure the
 * header parsed (container.ts), no decode and no second parse.
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
export function stripAvif(bytes: Uint8Array, { container }: AvifHeader): Uint8Array {
  const { top, meta, moov } = container;
  const ftyp = top[0];
  if (!meta && !moov) throw damaged('avif: neither meta nor moov');

  const media = new Relocation(bytes.length);
  const kept = meta ? keptItems(bytes, meta, media) : null;
  const chunks = moov ? movedChunks(moov.chunks, media) : [];
  media.finish();
  kept?.idat.finish();

  // Widths of the rewritten offsets: fixed before layout (the output is at most about twice the input).
  const wide = bytes.length * 2 > 0xffffffff;
  const mdatHeader = media.total + 8 > 0xffffffff ? 16 : 8;
  const ftypBytes = copyBox(bytes, ftyp);
  const metaSize = kept ? writeMeta(bytes, kept, 0, wide).length : 0;
  const moovSize = moov ? copyBox(bytes, moov.box).length : 0;
  const mdatStart = ftypBytes.length + metaSize + moovSize;
  const dataStart = mdatStart + mdatHeader;

  const parts = [ftypBytes];
  if (kept) parts.push(writeMeta(bytes, kept, dataStart, wide));
  if (moov) parts.push(writeMoov(bytes, moov.box, chunks, media, dataStart));
  if (media.total > 0) parts.push(boxHeader('mdat', media.total), ...media.copy(bytes));
  return concat(parts);
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

/** A kept `iloc` entry: its extents are handles of `target` (media for method 0, idat for method 1). */
interface KeptLocation extends Omit<ItemLocation, 'extents'> {
  extents: Extent[];
  target: Relocation;
}

interface KeptItems {
  meta: MetaIndex;
  removed: Set<number>;
  locations: KeptLocation[];
  idat: Relocation;
}

/** Which items go, and where the kept items' data lies (registered in `media` or the idat relocation). */
function keptItems(bytes: Uint8Array, meta: MetaIndex, media: Relocation): KeptItems {
  // Items of infe versions 0 and 1 carry no type: whether they are metadata cannot be told.
  if (meta.untypedItems > 0) throw damaged('avif: infe version 0 or 1');
  const removed = new Set([...meta.items.values()].filter((item) => METADATA_ITEM_TYPES.has(item.type)).map((item) => item.id));
  if (meta.primaryId !== null && removed.has(meta.primaryId)) throw damaged('avif: the primary item is a metadata item');
  const idat = new Relocation(meta.idat ? meta.idat.end - meta.idat.body : 0);
  const all = meta.iloc?.locations ?? [];
  // Zero-width fields make extents free to declare: bound them by the file so output stays small.
  if (all.reduce((sum, location) => sum + location.extents.length, 0) * 8 > bytes.length) throw damaged('avif: more iloc extents than the file can hold');
  const locations: KeptLocation[] = [];
  for (const location of all) {
    if (removed.has(location.id)) continue; // its data is simply not copied
    if (location.dataReference !== 0) throw damaged(`avif: item ${location.id} data in another file`);
    if (location.method > 1) throw damaged(`avif: item ${location.id} construction method ${location.method}`);
    if (location.method === 1 && !meta.idat) throw damaged('avif: construction method 1 without idat');
    const target = location.method === 0 ? media : idat;
    // extent_length 0 means "to the end of the source"; an empty extent cannot be written back.
    const extents = location.extents.map(([offset, length]) => target.add(offset, length === 0 ? target.sourceLength - offset : length));
    locations.push({ ...location, extents, target });
  }
  return { meta, removed, locations, idat };
}

interface MovedChunk {
  /** Where the chunk offset is stored in the input. */
  at: number;
  size: 4 | 8;
  /** Handle in `media`, or null for an empty chunk. */
  extent: Extent | null;
}

/** Every chunk of every track registered in `media`. */
function movedChunks(chunks: SampleChunk[] | Error, media: Relocation): MovedChunk[] {
  if (chunks instanceof Error) throw chunks;
  return chunks.map(({ at, size, offset, length }) => ({ at, size, extent: length === 0 ? null : media.add(offset, length) }));
}

/** The new `meta`: children in their order, rewritten where items or properties went away. */
function writeMeta(bytes: Uint8Array, kept: KeptItems, dataStart: number, wide: boolean): Uint8Array {
  const { meta, removed } = kept;
  const parts: Uint8Array[] = [bytes.subarray(meta.box.body, meta.box.body + 4)];
  for (const child of meta.children) {
    if (DROPPED_META_CHILDREN.has(child.type)) continue;
    if (child.type === 'iinf') parts.push(writeIinf(bytes, child, kept));
    else if (child.type === 'iloc') parts.push(writeIloc(kept, dataStart, wide));
    else if (child.type === 'iref') parts.push(writeIref(meta.iref!, removed));
    else if (child.type === 'iprp') parts.push(writeIprp(bytes, meta.properties!, removed));
    else if (child.type === 'idat') {
      // An empty idat goes, unless a kept item still names construction method 1 (with no extents):
      // without the box, stripping the output again would refuse it ("method 1 without idat").
      const needed = kept.idat.total > 0 || kept.locations.some((location) => location.method === 1);
      if (needed) parts.push(boxHeader('idat', kept.idat.total), ...kept.idat.copy(bytes.subarray(child.body, child.end)));
    } else {
      if (child.type === 'grpl') checkGroups(meta.groups, removed);
      parts.push(copyBox(bytes, child));
    }
  }
  return wrap('meta', parts);
}

function writeIinf(bytes: Uint8Array, iinf: IsoBox, { meta, removed }: KeptItems): Uint8Array {
  const version = bytes[iinf.body];
  const kept = [...meta.items.values()].filter((item) => !removed.has(item.id));
  const head = [...bytes.subarray(iinf.body, iinf.body + 4), ...(version === 0 ? be(kept.length, 2) : be(kept.length, 4))];
  return wrap('iinf', [new Uint8Array(head), ...kept.map((item) => copyBox(bytes, item.infe))]);
}

/**
 * A fresh `iloc` of the same version: 4-byte (8 if `wide`) offsets and lengths, no base offset and
 * no extent index; method 0 extents point into the new mdat, method 1 extents into the new idat.
 */
function writeIloc({ meta, locations }: KeptItems, dataStart: number, wide: boolean): Uint8Array {
  const version = meta.iloc!.version;
  const field = wide ? 8 : 4;
  const out: number[] = [version, 0, 0, 0, (field << 4) | field, 0, ...be(locations.length, version < 2 ? 2 : 4)];
  for (const location of locations) {
    out.push(...be(location.id, version < 2 ? 2 : 4));
    if (version >= 1) out.push(0, location.method);
    out.push(0, 0, ...be(location.extents.length, 2)); // data_reference_index 0, no base offset
    for (const extent of location.extents) {
      const offset = (location.method === 0 ? dataStart : 0) + location.target.moved(extent);
      out.push(...be(offset, field), ...be(extent.length, field));
    }
  }
  return wrap('iloc', [new Uint8Array(out)]);
}

/** `iref` without references from removed items or to them; empty reference boxes and an empty iref go. */
function writeIref(iref: NonNullable<MetaIndex['iref']>, removed: Set<number>): Uint8Array {
  const idSize = iref.version === 0 ? 2 : 4;
  const kept: Uint8Array[] = [];
  for (const { type, from, to, box } of iref.references) {
    if (box.body + idSize + 2 + to.length * idSize !== box.end) throw damaged('avif: iref entry size');
    const targets = to.filter((t) => !removed.has(t));
    if (removed.has(from) || targets.length === 0) continue;
    kept.push(wrap(type, [new Uint8Array([...be(from, idSize), ...be(targets.length, 2), ...targets.flatMap((t) => be(t, idSize))])]));
  }
  if (kept.length === 0) return new Uint8Array(0);
  return wrap('iref', [new Uint8Array([iref.version, 0, 0, 0]), ...kept]);
}

/** `iprp` with ICC `colr` boxes gone from `ipco` and every `ipma` renumbered to match. */
function writeIprp(bytes: Uint8Array, { children, boxes, ipma }: NonNullable<MetaIndex['properties']>, removed: Set<number>): Uint8Array {
  // newIndex[i] = new 1-based index of old property i (1-based), 0 = removed.
  const newIndex = [0];
  let next = 1;
  for (const property of boxes) {
    const icc = property.type === 'colr' && property.end - property.body >= 4 && ICC_COLOUR_TYPES.has(fourCC(bytes, property.body));
    newIndex.push(icc ? 0 : next++);
  }
  const parts = children.map((child) => {
    if (child.type === 'ipco') return wrap('ipco', boxes.filter((_, i) => newIndex[i + 1] !== 0).map((p) => copyBox(bytes, p)));
    const associations = ipma.find((entry) => entry.box === child);
    if (associations) return writeIpma(associations, removed, newIndex);
    return copyBox(bytes, child);
  });
  return wrap('iprp', parts);
}

function writeIpma({ version, flags, entries }: PropertyAssociations, removed: Set<number>, newIndex: number[]): Uint8Array {
  const wideIndex = (flags & 1) === 1;
  const idSize = version === 0 ? 2 : 4;
  const out: number[] = [version, (flags >> 16) & 255, (flags >> 8) & 255, flags & 255, 0, 0, 0, 0];
  let kept = 0;
  for (const { id, associations } of entries) {
    if (removed.has(id)) continue;
    const entry: number[] = [];
    let n = 0;
    for (const raw of associations) {
      const essential = wideIndex ? raw & 0x8000 : raw & 0x80;
      const index = wideIndex ? raw & 0x7fff : raw & 0x7f;
      if (index !== 0 && newIndex[index] === 0) continue;
      const value = essential | (index === 0 ? 0 : newIndex[index]);
      entry.push(...(wideIndex ? be(value, 2) : [value]));
      n++;
    }
    out.push(...be(id, idSize), n, ...entry);
    kept++;
  }
  out.splice(4, 4, ...be(kept, 4));
  return wrap('ipma', [new Uint8Array(out)]);
}

/** Entity groups naming a removed item cannot be rewritten safely (their payloads are type-specific). */
function checkGroups(groups: number[][] | null, removed: Set<number>): void {
  if (!groups) throw damaged('avif: entity group size');
  if (groups.some((ids) => ids.some((id) => removed.has(id)))) throw damaged('avif: entity group names a metadata item');
}

/** `moov` copied with every chunk offset moved to where its bytes now lie. */
function writeMoov(bytes: Uint8Array, moov: IsoBox, chunks: MovedChunk[], media: Relocation, dataStart: number): Uint8Array {
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
