import { damaged } from '../../bytes';
import type { IsoBox } from './header';
import { childBoxes, FieldReader, singleChild } from './boxes';
import { AVIF_LIMITS, tooMany } from './limits';
import type { PropertyLink } from './properties';

/** Where an item's bytes are: ISO/IEC 14496-12 8.11.3 (iloc). */
export interface ItemLocation {
  /** 0: file offsets, 1: offsets in `idat`, 2: other items' data (not supported). */
  method: number;
  dataReference: number;
  /** [offset, length] in the source; length 0 = to the end of the source. */
  extents: [number, number][];
}

export interface MetaItem {
  id: number;
  type: string;
  properties: PropertyLink[];
  location: ItemLocation | null;
}

/** The item table of a `meta` box: everything the decoder looks up, each list read once. */
export interface MetaIndex {
  items: Map<number, MetaItem>;
  primaryId: number | null;
  idat: IsoBox | null;
  /** References by type ('dimg', 'auxl', 'prem'): from item id -> to item ids, in file order. */
  references: Map<string, Map<number, number[]>>;
}

const REFERENCE_TYPES = new Set(['dimg', 'auxl', 'prem']);

/**
 * Reads `meta` (HEIF 9.3): hdlr must be 'pict'; iinf, iloc, iprp, iref, pitm and idat at most once.
 * Every list is walked once and counted against AVIF_LIMITS before anything is stored, so the
 * cost is linear in the file and bounded by the limits.
 */
export function readMeta(bytes: Uint8Array, meta: IsoBox): MetaIndex {
  if (FieldReader.of(bytes, meta).u8() !== 0) throw damaged('avif: meta version');
  const children = childBoxes(bytes, meta, 4);
  const hdlr = singleChild(children, 'hdlr');
  if (!hdlr) throw damaged('avif: meta without hdlr');
  const handler = FieldReader.of(bytes, hdlr, 8);
  if (handler.fourCC() !== 'pict') throw damaged('avif: meta handler is not pict');

  const iinf = singleChild(children, 'iinf');
  const items = iinf ? readItemInfo(bytes, iinf) : new Map<number, MetaItem>();
  const iloc = singleChild(children, 'iloc');
  if (iloc) readLocations(bytes, iloc, items);
  const iprp = singleChild(children, 'iprp');
  if (iprp) readProperties(bytes, iprp, items);
  const iref = singleChild(children, 'iref');
  const pitm = singleChild(children, 'pitm');
  return {
    items,
    primaryId: pitm ? readPrimaryId(bytes, pitm) : null,
    idat: singleChild(children, 'idat'),
    references: iref ? readReferences(bytes, iref) : new Map(),
  };
}

function readPrimaryId(bytes: Uint8Array, pitm: IsoBox): number {
  const r = FieldReader.of(bytes, pitm);
  const version = r.u8();
  r.skip(3);
  return version === 0 ? r.u16() : r.u32();
}

/** iinf / infe version 2 and 3 (items of versions 0 and 1 carry no type and are skipped, as libavif does). */
function readItemInfo(bytes: Uint8Array, iinf: IsoBox): Map<number, MetaItem> {
  const r = FieldReader.of(bytes, iinf);
  const version = r.u8();
  r.skip(3);
  const count = version === 0 ? r.u16() : r.u32();
  if (count > AVIF_LIMITS.items) throw tooMany('items', count, AVIF_LIMITS.items);
  const entries = childBoxes(bytes, { type: 'iinf', body: r.at, end: iinf.end }, 0, AVIF_LIMITS.items);
  if (entries.length !== count) throw damaged(`avif: iinf declares ${count} entries and holds ${entries.length}`);
  const items = new Map<number, MetaItem>();
  for (const infe of entries) {
    if (infe.type !== 'infe') throw damaged('avif: iinf holds a box other than infe');
    const e = FieldReader.of(bytes, infe);
    const infeVersion = e.u8();
    e.skip(3);
    if (infeVersion < 2) continue;
    const id = infeVersion === 2 ? e.u16() : e.u32();
    e.skip(2); // item_protection_index
    const type = e.fourCC();
    if (items.has(id)) throw damaged(`avif: item ${id} declared twice`);
    items.set(id, { id, type, properties: [], location: null });
  }
  return items;
}

function readLocations(bytes: Uint8Array, iloc: IsoBox, items: Map<number, MetaItem>): void {
  const r = FieldReader.of(bytes, iloc);
  const version = r.u8();
  r.skip(3);
  if (version > 2) throw damaged(`avif: iloc version ${version}`);
  const sizes = r.u16();
  const offsetSize = sizes >> 12;
  const lengthSize = (sizes >> 8) & 15;
  const baseSize = (sizes >> 4) & 15;
  const indexSize = version > 0 ? sizes & 15 : 0;
  const count = version < 2 ? r.u16() : r.u32();
  if (count > AVIF_LIMITS.items) throw tooMany('item locations', count, AVIF_LIMITS.items);
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    const id = version < 2 ? r.u16() : r.u32();
    const method = version > 0 ? r.u16() & 15 : 0;
    const dataReference = r.u16();
    const base = r.uint(baseSize);
    const extentCount = r.u16();
    if (extentCount > AVIF_LIMITS.extentsPerItem) throw tooMany(`extents for item ${id}`, extentCount, AVIF_LIMITS.extentsPerItem);
    const extents: [number, number][] = [];
    for (let e = 0; e < extentCount; e++) {
      r.uint(indexSize); // extent_index: only construction method 2 uses it
      extents.push([base + r.uint(offsetSize), r.uint(lengthSize)]);
    }
    if (seen.has(id)) throw damaged(`avif: iloc lists item ${id} twice`);
    seen.add(id);
    const item = items.get(id);
    if (item) item.location = { method, dataReference, extents };
  }
}

/** iprp: the ipco property boxes and every ipma association (an item associated twice is damage). */
function readProperties(bytes: Uint8Array, iprp: IsoBox, items: Map<number, MetaItem>): void {
  const children = childBoxes(bytes, iprp);
  const ipco = singleChild(children, 'ipco');
  if (!ipco) throw damaged('avif: iprp without ipco');
  const properties = childBoxes(bytes, ipco, 0, AVIF_LIMITS.properties);
  const associated = new Set<number>();
  let entriesTotal = 0;
  for (const ipma of children) {
    if (ipma.type !== 'ipma') continue;
    const r = FieldReader.of(bytes, ipma);
    const version = r.u8();
    const flags = r.u8() * 65536 + r.u16();
    if (version > 1) throw damaged(`avif: ipma version ${version}`);
    const wideIndex = (flags & 1) === 1;
    const count = r.u32();
    entriesTotal += count;
    if (entriesTotal > AVIF_LIMITS.items) throw tooMany('property associations', entriesTotal, AVIF_LIMITS.items);
    for (let e = 0; e < count; e++) {
      const id = version < 1 ? r.u16() : r.u32();
      if (associated.has(id)) throw damaged(`avif: item ${id} has two ipma entries`);
      associated.add(id);
      const links: PropertyLink[] = [];
      const associations = r.u8();
      for (let a = 0; a < associations; a++) {
        const raw = wideIndex ? r.u16() : r.u8();
        const essential = wideIndex ? raw >= 0x8000 : raw >= 0x80;
        const index = wideIndex ? raw & 0x7fff : raw & 0x7f;
        if (index === 0) continue; // "no property"
        if (index > properties.length) throw damaged(`avif: ipma index ${index} past the ${properties.length} properties`);
        links.push({ box: properties[index - 1], essential });
      }
      const item = items.get(id);
      if (item) item.properties = links;
    }
  }
}

/** iref: the reference types the decoder follows; a second reference box of one type from one item is damage. */
function readReferences(bytes: Uint8Array, iref: IsoBox): Map<string, Map<number, number[]>> {
  const r = FieldReader.of(bytes, iref);
  const version = r.u8();
  r.skip(3);
  if (version > 1) throw damaged(`avif: iref version ${version}`);
  const references = new Map<string, Map<number, number[]>>();
  const boxes = childBoxes(bytes, { type: 'iref', body: r.at, end: iref.end }, 0, AVIF_LIMITS.references);
  for (const reference of boxes) {
    const b = FieldReader.of(bytes, reference);
    const id = () => (version === 0 ? b.u16() : b.u32());
    const from = id();
    const count = b.u16();
    if (count > AVIF_LIMITS.references) throw tooMany(`references from item ${from}`, count, AVIF_LIMITS.references);
    const to: number[] = [];
    for (let i = 0; i < count; i++) to.push(id());
    if (!REFERENCE_TYPES.has(reference.type)) continue;
    let byType = references.get(reference.type);
    if (!byType) references.set(reference.type, (byType = new Map()));
    if (byType.has(from)) throw damaged(`avif: two ${reference.type} references from item ${from}`);
    byType.set(from, to);
  }
  return references;
}

/**
 * The byte ranges of an item's data in the file, its extents in order: method 0 offsets are file
 * offsets, method 1 offsets are in `idat`. Damage when a range leaves its source.
 */
export function itemRanges(bytes: Uint8Array, index: MetaIndex, item: MetaItem): { start: number; end: number }[] {
  const location = item.location;
  if (!location || location.extents.length === 0) throw damaged(`avif: item ${item.id} has no location`);
  if (location.dataReference !== 0) throw damaged(`avif: item ${item.id} data is in another file`);
  if (location.method > 1) throw damaged(`avif: item ${item.id} construction method ${location.method}`);
  if (location.method === 1 && !index.idat) throw damaged(`avif: item ${item.id} is in an idat the file lacks`);
  const origin = location.method === 1 ? index.idat!.body : 0;
  const sourceEnd = location.method === 1 ? index.idat!.end : bytes.length;
  return location.extents.map(([offset, length]) => {
    const start = origin + offset;
    const end = length === 0 ? sourceEnd : start + length;
    if (!(start >= origin && end > start && end <= sourceEnd)) throw damaged(`avif: item ${item.id} extent ${offset}+${length} outside its data`);
    return { start, end };
  });
}
