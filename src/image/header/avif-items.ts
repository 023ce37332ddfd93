import { AppError } from '../../errors';
import { damaged, fourCC, need, startsWith, u16be, u32be, u8 } from '../bytes';
import type { Dimensions } from '../types';
import { readAv1MaxFrameSize } from './av1';
import { findBox, isoBoxes, readPrimaryItemId, type IsoBox } from './avif';

/**
 * Checks that nothing libavif may decode from `bytes` can be larger than `dims`, the size the header
 * guard checked, before any decode: the AV1 sequence header of every `av01` item libavif decodes
 * (the primary item, its alpha item and their grid tiles; its data via `iloc`, and the `av1C`
 * configOBUs) may be no larger than its own `ispe` (or `dims` without one), every
 * `grid` must be consistent with its tiles and no larger than its `ispe`, an alpha auxiliary image
 * no larger than `dims`, and every `av01` track's sample entry and first sample no larger than
 * `dims`. Refusing (rather than returning the largest buffer size as the header size) keeps the
 * header size equal to the decoded size, which the pipeline compares after decoding.
 */
export function verifyAvifDecodeSizes(bytes: Uint8Array, dims: Dimensions): void {
  const file = { body: 0, end: bytes.length };
  const meta = findBox(bytes, file, 'meta');
  const moov = findBox(bytes, file, 'moov');
  const items = meta ? verifyItems(bytes, meta, dims) : 0;
  const tracks = moov ? verifyTracks(bytes, moov, dims) : 0;
  if (items + tracks === 0) throw damaged('avif: no av01 image item or track');
}

interface Item {
  type: string;
  /** `ipco` boxes associated through `ipma`. */
  properties: IsoBox[];
  /** The `iloc` entry (extents as [offset, length] before resolving), or null without one. */
  location: { method: number; dataReference: number; extents: [number, number][] } | null;
}

const ALPHA_URNS = ['urn:mpeg:mpegB:cicp:systems:auxiliary:alpha', 'urn:mpeg:hevc:2015:auxid:1'];

/** Checks the items of `meta`; returns how many `av01` items there are. */
function verifyItems(bytes: Uint8Array, meta: IsoBox, dims: Dimensions): number {
  const items = readItems(bytes, meta);
  const references = readReferences(bytes, meta, 'dimg');
  const decoded = decodedItemIds(bytes, meta, references);
  for (const [id, item] of items) {
    const ispe = itemSize(bytes, item);
    const bound = ispe ?? dims;
    if (isAlpha(bytes, item) && ispe && !fitsIn(ispe, dims)) {
      throw damaged(`avif: alpha item ${id} ispe ${show(ispe)} is larger than the image ${show(dims)}`);
    }
    if (item.type === 'av01' && decoded.has(id)) {
      for (const [where, size] of av01Sizes(bytes, meta, id, item)) {
        if (!fitsIn(size, bound)) throw damaged(`avif: item ${id} ${where} AV1 max frame ${show(size)} is larger than its ispe ${show(bound)}`);
      }
    } else if (item.type === 'grid') {
      verifyGrid(bytes, meta, id, item, bound, (references.get(id) ?? []).map((tile) => items.get(tile)));
    }
  }
  return [...items.values()].filter((item) => item.type === 'av01').length;
}

/**
 * The items libavif decodes: the primary, the alpha items that reference it (`auxl`), and their grid
 * tiles (`dimg`). Only their AV1 data is walked, so a file cannot make the check itself expensive by
 * declaring many items over the same bytes. Without `pitm` none (libavif then reads the tracks).
 */
function decodedItemIds(bytes: Uint8Array, meta: IsoBox, tiles: Map<number, number[]>): Set<number> {
  const primary = readPrimaryItemId(bytes, meta);
  if (primary === null) return new Set();
  const images = [primary];
  for (const [from, to] of readReferences(bytes, meta, 'auxl')) if (to.includes(primary)) images.push(from);
  return new Set(images.flatMap((id) => [id, ...(tiles.get(id) ?? [])]));
}

/** AV1 max frame sizes of an item: from its data (required) and its av1C configOBUs (if any). */
function av01Sizes(bytes: Uint8Array, meta: IsoBox, id: number, item: Item): [string, Dimensions][] {
  const fromData = readAv1MaxFrameSize(itemData(bytes, meta, id, item));
  if (!fromData) throw damaged(`avif: item ${id} data has no AV1 sequence header`);
  const sizes: [string, Dimensions][] = [['data', fromData]];
  const av1C = item.properties.find((box) => box.type === 'av1C');
  const fromConfig = av1C && av1cSequenceSize(bytes, av1C);
  if (fromConfig) sizes.push(['av1C', fromConfig]);
  return sizes;
}

/** The sequence header in an av1C box's configOBUs (after its 4 fixed bytes), or null. */
function av1cSequenceSize(bytes: Uint8Array, av1C: IsoBox): Dimensions | null {
  if (av1C.end - av1C.body < 4) throw damaged('avif: short av1C');
  return readAv1MaxFrameSize(bytes.subarray(av1C.body + 4, av1C.end));
}

/**
 * ImageGrid (HEIF 6.6.2.3): the output must fit the grid's `ispe`, it needs rows x columns `av01`
 * tiles of one `ispe` size, and the tiles must cover the output with the last row and column
 * overlapping it (libavif's rules). Tiles may not be larger than the output either, so all tiles
 * together stay under twice the output size per side.
 */
function verifyGrid(bytes: Uint8Array, meta: IsoBox, id: number, item: Item, bound: Dimensions, tiles: (Item | undefined)[]): void {
  const data = itemData(bytes, meta, id, item);
  if (u8(data, 0) !== 0) throw damaged(`avif: grid ${id} version ${data[0]}`);
  const wide = (u8(data, 1) & 1) === 1;
  const rows = u8(data, 2) + 1;
  const columns = u8(data, 3) + 1;
  const output = wide
    ? { width: u32be(data, 4), height: u32be(data, 8) }
    : { width: u16be(data, 4), height: u16be(data, 6) };
  if (output.width === 0 || output.height === 0 || !fitsIn(output, bound)) {
    throw damaged(`avif: grid ${id} output ${show(output)} does not fit its ispe ${show(bound)}`);
  }
  if (tiles.length !== rows * columns) throw damaged(`avif: grid ${id} needs ${rows * columns} tiles, has ${tiles.length}`);
  let tile: Dimensions | null = null;
  for (const tileItem of tiles) {
    const size = tileItem?.type === 'av01' ? itemSize(bytes, tileItem) : null;
    if (!size) throw damaged(`avif: grid ${id} has a tile that is not an av01 item with an ispe`);
    if (tile && (size.width !== tile.width || size.height !== tile.height)) throw damaged(`avif: grid ${id} tiles differ in size`);
    tile = size;
  }
  const { width, height } = tile!;
  const covers = width * columns >= output.width && height * rows >= output.height;
  const overlaps = width * (columns - 1) < output.width && height * (rows - 1) < output.height;
  if (!covers || !overlaps || !fitsIn(tile!, output)) {
    throw damaged(`avif: grid ${id} of ${columns}x${rows} tiles of ${show(tile!)} does not match its output ${show(output)}`);
  }
}

/** Items by id: type from `iinf`, properties from `ipma`, extents from `iloc`. */
function readItems(bytes: Uint8Array, meta: IsoBox): Map<number, Item> {
  const items = new Map<number, Item>();
  const iinf = findBox(bytes, meta, 'iinf', 4);
  if (!iinf) return items;
  const countSize = u8(bytes, iinf.body) === 0 ? 2 : 4;
  for (const infe of isoBoxes(bytes, iinf.body + 4 + countSize, iinf.end)) {
    if (infe.type !== 'infe') continue;
    const inBox = bytes.subarray(0, infe.end);
    const version = u8(inBox, infe.body);
    if (version < 2) continue; // no item_type: libavif ignores such items
    const id = version === 2 ? u16be(inBox, infe.body + 4) : u32be(inBox, infe.body + 4);
    const typeAt = infe.body + 4 + (version === 2 ? 2 : 4) + 2;
    items.set(id, { type: fourCC(inBox, typeAt), properties: [], location: null });
  }
  readAssociations(bytes, meta, items);
  readLocations(bytes, meta, items);
  return items;
}

function readAssociations(bytes: Uint8Array, meta: IsoBox, items: Map<number, Item>): void {
  const iprp = findBox(bytes, meta, 'iprp', 4);
  const ipco = iprp && findBox(bytes, iprp, 'ipco');
  if (!iprp || !ipco) return;
  const properties = [...isoBoxes(bytes, ipco.body, ipco.end)];
  try {
    readIpma(bytes, iprp, properties, items);
  } catch (error) {
    // A broken ipma only loses associations: items without an ispe are then bounded by the image size.
    if (!(error instanceof AppError)) throw error;
  }
}

function readIpma(bytes: Uint8Array, iprp: IsoBox, properties: IsoBox[], items: Map<number, Item>): void {
  for (const ipma of isoBoxes(bytes, iprp.body, iprp.end)) {
    if (ipma.type !== 'ipma') continue;
    const inBox = bytes.subarray(0, ipma.end);
    const version = u8(inBox, ipma.body);
    const wideIndex = (u8(inBox, ipma.body + 3) & 1) === 1;
    const entries = u32be(inBox, ipma.body + 4);
    let at = ipma.body + 8;
    for (let e = 0; e < entries; e++) {
      const id = version < 1 ? u16be(inBox, at) : u32be(inBox, at);
      at += version < 1 ? 2 : 4;
      const count = u8(inBox, at++);
      for (let a = 0; a < count; a++) {
        const index = wideIndex ? u16be(inBox, at) & 0x7fff : u8(inBox, at) & 0x7f;
        at += wideIndex ? 2 : 1;
        const property = properties[index - 1];
        if (property) items.get(id)?.properties.push(property);
      }
    }
  }
}

/** `iloc` (ISO 14496-12 8.11.3): construction method 0 (file offsets) and 1 (`idat` offsets). */
function readLocations(bytes: Uint8Array, meta: IsoBox, items: Map<number, Item>): void {
  const iloc = findBox(bytes, meta, 'iloc', 4);
  if (!iloc) return;
  const b = bytes.subarray(0, iloc.end);
  const version = u8(b, iloc.body);
  if (version > 2) throw damaged(`avif: iloc version ${version}`);
  const sizes = u16be(b, iloc.body + 4);
  const [offsetSize, lengthSize, baseSize, indexSize] = [sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15, version > 0 ? sizes & 15 : 0];
  let at = iloc.body + 6;
  const field = (size: number): number => {
    if (size !== 0 && size !== 4 && size !== 8) throw damaged(`avif: iloc field size ${size}`);
    const value = size === 0 ? 0 : size === 4 ? u32be(b, at) : u32be(b, at) * 2 ** 32 + u32be(b, at + 4);
    at += size;
    return value;
  };
  const count = version < 2 ? u16be(b, at) : u32be(b, at);
  at += version < 2 ? 2 : 4;
  let extentTotal = 0;
  for (let i = 0; i < count; i++) {
    const id = version < 2 ? u16be(b, at) : u32be(b, at);
    at += version < 2 ? 2 : 4;
    let method = 0;
    if (version > 0) {
      method = u16be(b, at) & 15;
      at += 2;
    }
    const dataReference = u16be(b, at);
    at += 2;
    const base = field(baseSize);
    const extentCount = u16be(b, at);
    at += 2;
    // Zero-width fields make extents free to declare: bound them by the file so the walk stays short.
    extentTotal += extentCount;
    if (extentTotal * 8 > bytes.length) throw damaged('avif: more iloc extents than the file can hold');
    const extents: [number, number][] = [];
    for (let e = 0; e < extentCount; e++) {
      field(indexSize);
      extents.push([base + field(offsetSize), field(lengthSize)]);
    }
    const item = items.get(id);
    if (item) item.location = { method, dataReference, extents };
  }
}

/** `from` -> `to` item ids of one reference type in `iref`. */
function readReferences(bytes: Uint8Array, meta: IsoBox, type: string): Map<number, number[]> {
  const references = new Map<number, number[]>();
  const iref = findBox(bytes, meta, 'iref', 4);
  if (!iref) return references;
  const idSize = u8(bytes, iref.body) === 0 ? 2 : 4;
  for (const box of isoBoxes(bytes, iref.body + 4, iref.end)) {
    if (box.type !== type) continue;
    const b = bytes.subarray(0, box.end);
    const id = (at: number) => (idSize === 2 ? u16be(b, at) : u32be(b, at));
    const from = id(box.body);
    const count = u16be(b, box.body + idSize);
    let to = references.get(from);
    if (!to) references.set(from, (to = []));
    for (let i = 0; i < count; i++) to.push(id(box.body + idSize + 2 + i * idSize));
  }
  return references;
}

/**
 * Where the AV1 sequence header must be: libavif's encoders write it as the first OBU of an item, and
 * only this much of an item is read (grid descriptors are 8 or 12 bytes), so a file cannot make the
 * check copy or walk more than this per item.
 */
const ITEM_HEAD_BYTES = 1024;
const itemHead = new Uint8Array(ITEM_HEAD_BYTES);

/**
 * The first ITEM_HEAD_BYTES of an item's data, its extents joined: a view of the file for one long
 * extent, otherwise a shared scratch buffer that the next call overwrites. Only items that are read
 * are resolved, as libavif does: a broken location of an item nobody decodes is no damage.
 */
function itemData(bytes: Uint8Array, meta: IsoBox, id: number, item: Item): Uint8Array {
  const location = item.location;
  if (!location || location.extents.length === 0) throw damaged(`avif: item ${id} has no location`);
  if (location.dataReference !== 0) throw damaged(`avif: item ${id} data in another file`);
  if (location.method > 1) throw damaged(`avif: item ${id} construction method ${location.method}`);
  const idat = location.method === 1 ? findBox(bytes, meta, 'idat', 4) : null;
  if (location.method === 1 && !idat) throw damaged(`avif: item ${id} in a missing idat`);
  const origin = idat ? idat.body : 0;
  const end = idat ? idat.end : bytes.length;
  let filled = 0;
  for (const [offset, length] of location.extents) {
    const start = origin + offset;
    const size = length === 0 ? end - start : length; // 0: to the end of the data
    if (!(start >= origin && size >= 0 && start + size <= end)) throw damaged(`avif: item ${id} extent past the end`);
    const extent = bytes.subarray(start, start + Math.min(size, ITEM_HEAD_BYTES - filled));
    if (filled === 0 && (extent.length === ITEM_HEAD_BYTES || location.extents.length === 1)) return extent;
    itemHead.set(extent, filled);
    filled += extent.length;
    if (filled === ITEM_HEAD_BYTES) break;
  }
  return itemHead.subarray(0, filled);
}

function itemSize(bytes: Uint8Array, item: Item): Dimensions | null {
  const ispe = item.properties.find((box) => box.type === 'ispe');
  if (!ispe) return null;
  const inBox = bytes.subarray(0, ispe.end);
  return { width: u32be(inBox, ispe.body + 4), height: u32be(inBox, ispe.body + 8) };
}

function isAlpha(bytes: Uint8Array, item: Item): boolean {
  const auxC = item.properties.find((box) => box.type === 'auxC');
  if (!auxC) return false;
  need(bytes, auxC.body, 4, 'avif: auxC');
  const text = bytes.subarray(auxC.body + 4, auxC.end);
  return ALPHA_URNS.some((urn) => text.length > urn.length && text[urn.length] === 0 && startsWith(text, 0, urn));
}

/**
 * Every `av01` track (moov/trak/mdia/minf/stbl): its sample entry size must fit `dims`, and the AV1
 * sequence headers of its av1C and its first sample (located through stco/co64 and stsz) must fit
 * the sample entry. libavif decodes only the first frame. Returns how many `av01` tracks there are.
 */
function verifyTracks(bytes: Uint8Array, moov: IsoBox, dims: Dimensions): number {
  let count = 0;
  for (const trak of isoBoxes(bytes, moov.body, moov.end)) {
    if (trak.type !== 'trak') continue;
    let stbl: IsoBox | null = trak;
    for (const type of ['mdia', 'minf', 'stbl']) stbl = stbl && findBox(bytes, stbl, type);
    const stsd = stbl && findBox(bytes, stbl, 'stsd');
    const entry = stsd && findBox(bytes, stsd, 'av01', 8);
    if (!stbl || !entry) continue;
    count++;
    const inEntry = bytes.subarray(0, entry.end);
    const declared = { width: u16be(inEntry, entry.body + 24), height: u16be(inEntry, entry.body + 26) };
    if (!fitsIn(declared, dims)) throw damaged(`avif: track sample entry ${show(declared)} is larger than ${show(dims)}`);
    const av1C = findBox(bytes, { body: entry.body + 78, end: entry.end }, 'av1C'); // after the VisualSampleEntry fields
    const sizes: [string, Dimensions | null][] = [
      ['av1C', av1C && av1cSequenceSize(bytes, av1C)],
      ['first sample', readAv1MaxFrameSize(firstSample(bytes, stbl))],
    ];
    if (!sizes[1][1]) throw damaged('avif: first track sample has no AV1 sequence header');
    for (const [where, size] of sizes) {
      if (size && !fitsIn(size, declared)) throw damaged(`avif: track ${where} AV1 max frame ${show(size)} is larger than its sample entry ${show(declared)}`);
    }
  }
  return count;
}

function firstSample(bytes: Uint8Array, stbl: IsoBox): Uint8Array {
  const stco = findBox(bytes, stbl, 'stco') ?? findBox(bytes, stbl, 'co64');
  const stsz = findBox(bytes, stbl, 'stsz');
  if (!stco || !stsz) throw damaged('avif: track without stco/stsz');
  const inStco = bytes.subarray(0, stco.end);
  if (u32be(inStco, stco.body + 4) === 0) throw damaged('avif: track without chunks');
  const offset = stco.type === 'stco' ? u32be(inStco, stco.body + 8) : u32be(inStco, stco.body + 8) * 2 ** 32 + u32be(inStco, stco.body + 12);
  const inStsz = bytes.subarray(0, stsz.end);
  const fixed = u32be(inStsz, stsz.body + 4);
  const size = fixed !== 0 ? fixed : u32be(inStsz, stsz.body + 12);
  need(bytes, offset, size, 'avif: first track sample');
  return bytes.subarray(offset, offset + Math.min(size, ITEM_HEAD_BYTES));
}

function fitsIn(size: Dimensions, bound: Dimensions): boolean {
  return size.width <= bound.width && size.height <= bound.height;
}

function show(size: Dimensions): string {
  return `${size.width}x${size.height}`;
}
