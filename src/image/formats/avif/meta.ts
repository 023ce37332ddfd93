import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import { childBoxes, FieldReader, singleChild, type IsoBox } from './boxes';
import { AVIF_LIMITS, tooMany } from './limits';
import type { PropertyLink } from './properties';

/** Where an item's bytes are: ISO/IEC 14496-12 8.11.3 (iloc). */
export interface ItemLocation {
  id: number;
  /** 0: file offsets, 1: offsets in `idat`, 2: other items' data (not supported). */
  method: number;
  dataReference: number;
  /** [offset, length] in the source; length 0 = to the end of the source. */
  extents: [number, number][];
}

export interface MetaItem {
  id: number;
  type: string;
  /** The `infe` box (the strip copies it). */
  infe: IsoBox;
  /** A `mime` item's content type (XMP is application/rdf+xml). */
  contentType?: string;
  properties: PropertyLink[];
  location: ItemLocation | null;
}

/** One `ipma` box as stored: each entry's raw associations (essential bit and 1-based index, 0 = none). */
export interface PropertyAssociations {
  box: IsoBox;
  version: number;
  flags: number;
  entries: { id: number; associations: number[] }[];
}

/** One reference box of `iref`, whatever its type. */
export interface ItemReference {
  type: string;
  from: number;
  to: number[];
  box: IsoBox;
}

/**
 * The item table of a `meta` box: everything the decoder looks up, each list read once, and
 * everything as stored that the lossless strip rewrites.
 */
export interface MetaIndex {
  box: IsoBox;
  /** meta's children in file order. */
  children: IsoBox[];
  items: Map<number, MetaItem>;
  /** `infe` entries of versions 0 and 1, which carry no type and are skipped, as libavif does. */
  untypedItems: number;
  primaryId: number | null;
  idat: IsoBox | null;
  iloc: { version: number; locations: ItemLocation[] } | null;
  /** `iprp`'s children, `ipco`'s property boxes and every `ipma` box. */
  properties: { children: IsoBox[]; boxes: IsoBox[]; ipma: PropertyAssociations[] } | null;
  /** References by type ('dimg', 'auxl', 'prem'): from item id -> to item ids, in file order. */
  references: Map<string, Map<number, number[]>>;
  /** Every reference of `iref` in file order, with its version. */
  iref: { version: number; references: ItemReference[] } | null;
  /** The entity ids of each `grpl` group; null when unreadable (only the strip needs them). */
  groups: number[][] | null;
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
  const { items, untypedItems } = iinf ? readItemInfo(bytes, iinf) : { items: new Map<number, MetaItem>(), untypedItems: 0 };
  const ilocBox = singleChild(children, 'iloc');
  const iprp = singleChild(children, 'iprp');
  const irefBox = singleChild(children, 'iref');
  const pitm = singleChild(children, 'pitm');
  const grpl = singleChild(children, 'grpl');
  const iref = irefBox ? readReferences(bytes, irefBox) : null;
  return {
    box: meta,
    children,
    items,
    untypedItems,
    primaryId: pitm ? readPrimaryId(bytes, pitm) : null,
    idat: singleChild(children, 'idat'),
    iloc: ilocBox ? readLocations(bytes, ilocBox, items) : null,
    properties: iprp ? readProperties(bytes, iprp, items) : null,
    references: referencesByType(iref?.references ?? []),
    iref,
    groups: grpl ? readGroups(bytes, grpl) : null,
  };
}

function readPrimaryId(bytes: Uint8Array, pitm: IsoBox): number {
  const r = FieldReader.of(bytes, pitm);
  const version = r.u8();
  r.skip(3);
  return version === 0 ? r.u16() : r.u32();
}

/** iinf / infe version 2 and 3 (items of versions 0 and 1 carry no type and are skipped, as libavif does). */
function readItemInfo(bytes: Uint8Array, iinf: IsoBox): { items: Map<number, MetaItem>; untypedItems: number } {
  const r = FieldReader.of(bytes, iinf);
  const version = r.u8();
  r.skip(3);
  const count = version === 0 ? r.u16() : r.u32();
  if (count > AVIF_LIMITS.items) throw tooMany('items', count, AVIF_LIMITS.items);
  const entries = childBoxes(bytes, { type: 'iinf', body: r.at, end: iinf.end }, 0, AVIF_LIMITS.items);
  if (entries.length !== count) throw damaged(`avif: iinf declares ${count} entries and holds ${entries.length}`);
  const items = new Map<number, MetaItem>();
  let untypedItems = 0;
  for (const infe of entries) {
    if (infe.type !== 'infe') throw damaged('avif: iinf holds a box other than infe');
    const e = FieldReader.of(bytes, infe);
    const infeVersion = e.u8();
    e.skip(3);
    if (infeVersion < 2) {
      untypedItems++;
      continue;
    }
    const id = infeVersion === 2 ? e.u16() : e.u32();
    e.skip(2); // item_protection_index
    const type = e.fourCC();
    if (items.has(id)) throw damaged(`avif: item ${id} declared twice`);
    items.set(id, { id, type, infe, contentType: type === 'mime' ? mimeType(e) : undefined, properties: [], location: null });
  }
  return { items, untypedItems };
}

/** After item_type: item_name, then content_type (both null-terminated); undefined when unreadable. */
function mimeType(r: FieldReader): string | undefined {
  try {
    r.cString();
    return r.cString();
  } catch {
    return undefined;
  }
}

function readLocations(bytes: Uint8Array, iloc: IsoBox, items: Map<number, MetaItem>): { version: number; locations: ItemLocation[] } {
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
  const locations: ItemLocation[] = [];
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
    const location = { id, method, dataReference, extents };
    locations.push(location);
    const item = items.get(id);
    if (item) item.location = location;
  }
  return { version, locations };
}

/** iprp: the ipco property boxes and every ipma association (an item associated twice is damage). */
function readProperties(bytes: Uint8Array, iprp: IsoBox, items: Map<number, MetaItem>): NonNullable<MetaIndex['properties']> {
  const children = childBoxes(bytes, iprp);
  const ipco = singleChild(children, 'ipco');
  if (!ipco) throw damaged('avif: iprp without ipco');
  const boxes = childBoxes(bytes, ipco, 0, AVIF_LIMITS.properties);
  const associated = new Set<number>();
  const ipmas: PropertyAssociations[] = [];
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
    const entries: PropertyAssociations['entries'] = [];
    for (let e = 0; e < count; e++) {
      const id = version < 1 ? r.u16() : r.u32();
      if (associated.has(id)) throw damaged(`avif: item ${id} has two ipma entries`);
      associated.add(id);
      const links: PropertyLink[] = [];
      const associations: number[] = [];
      const associationCount = r.u8();
      for (let a = 0; a < associationCount; a++) {
        const raw = wideIndex ? r.u16() : r.u8();
        associations.push(raw);
        const essential = wideIndex ? raw >= 0x8000 : raw >= 0x80;
        const index = wideIndex ? raw & 0x7fff : raw & 0x7f;
        if (index === 0) continue; // "no property"
        if (index > boxes.length) throw damaged(`avif: ipma index ${index} past the ${boxes.length} properties`);
        links.push({ box: boxes[index - 1], essential });
      }
      entries.push({ id, associations });
      const item = items.get(id);
      if (item) item.properties = links;
    }
    ipmas.push({ box: ipma, version, flags, entries });
  }
  return { children, boxes, ipma: ipmas };
}

/** iref: every reference box, each list of ids bounded by AVIF_LIMITS. */
function readReferences(bytes: Uint8Array, iref: IsoBox): NonNullable<MetaIndex['iref']> {
  const r = FieldReader.of(bytes, iref);
  const version = r.u8();
  r.skip(3);
  if (version > 1) throw damaged(`avif: iref version ${version}`);
  const references: ItemReference[] = [];
  for (const box of childBoxes(bytes, { type: 'iref', body: r.at, end: iref.end }, 0, AVIF_LIMITS.references)) {
    const b = FieldReader.of(bytes, box);
    const id = () => (version === 0 ? b.u16() : b.u32());
    const from = id();
    const count = b.u16();
    if (count > AVIF_LIMITS.references) throw tooMany(`references from item ${from}`, count, AVIF_LIMITS.references);
    const to: number[] = [];
    for (let i = 0; i < count; i++) to.push(id());
    references.push({ type: box.type, from, to, box });
  }
  return { version, references };
}

/** The reference types the decoder follows; a second reference box of one type from one item is damage. */
function referencesByType(references: readonly ItemReference[]): MetaIndex['references'] {
  const byType = new Map<string, Map<number, number[]>>();
  for (const { type, from, to } of references) {
    if (!REFERENCE_TYPES.has(type)) continue;
    let fromItem = byType.get(type);
    if (!fromItem) byType.set(type, (fromItem = new Map()));
    if (fromItem.has(from)) throw damaged(`avif: two ${type} references from item ${from}`);
    fromItem.set(from, to);
  }
  return byType;
}

/** grpl: each entity group's ids (EntityToGroupBox: group_id, num_entities_in_group, entity_id...). */
function readGroups(bytes: Uint8Array, grpl: IsoBox): number[][] | null {
  try {
    return childBoxes(bytes, grpl).map((group) => {
      const r = FieldReader.of(bytes, group, 8);
      const count = r.u32();
      if (count * 4 > r.remaining) throw damaged('avif: entity group size');
      return Array.from({ length: count }, () => r.u32());
    });
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
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
