/**
 * Reads back the item structure of an AVIF file for tests of the writer (src/image/formats/avif): brands,
 * items with their types and hidden flags, references, property associations and the grid
 * descriptors. Written independently of the writer, straight from HEIF (ISO/IEC 23008-12) and
 * ISO/IEC 14496-12; it trusts its input and throws on anything unexpected.
 */
import { findBox, isoBoxes, type IsoBox } from '../../src/image/formats/avif/boxes';

export interface AvifItem {
  id: number;
  type: string;
  hidden: boolean;
  /** Associated properties in ipma order: the property box type, its body bytes, essential flag. */
  properties: { type: string; body: Uint8Array; essential: boolean }[];
  /** The item's bytes (iloc, construction method 0 or 1). */
  data: Uint8Array;
}

export interface AvifStructure {
  topLevel: string[];
  majorBrand: string;
  brands: string[];
  primaryId: number;
  items: Map<number, AvifItem>;
  /** [type, from, to[]] in file order. */
  references: [string, number, number[]][];
}

export interface ImageGrid {
  rows: number;
  columns: number;
  outputWidth: number;
  outputHeight: number;
}

const text = (bytes: Uint8Array, at: number, length = 4) => String.fromCharCode(...bytes.subarray(at, at + length));
const u16 = (bytes: Uint8Array, at: number) => (bytes[at] << 8) | bytes[at + 1];
const u32 = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at);

export function readAvifStructure(file: Uint8Array): AvifStructure {
  const top = [...isoBoxes(file, 0, file.length)];
  const ftyp = top[0];
  const brands: string[] = [];
  for (let at = ftyp.body + 8; at < ftyp.end; at += 4) brands.push(text(file, at));
  const meta = top.find((box) => box.type === 'meta')!;
  const child = (type: string) => {
    const box = findBox(file, meta, type, 4);
    if (!box) throw new Error(`no ${type}`);
    return box;
  };
  const items = readItemInfo(file, child('iinf'));
  readAssociations(file, child('iprp'), items);
  readLocations(file, child('iloc'), findBox(file, meta, 'idat', 4), items);
  const iref = findBox(file, meta, 'iref', 4);
  const references: [string, number, number[]][] = [];
  for (const box of iref ? isoBoxes(file, iref.body + 4, iref.end) : []) {
    const count = u16(file, box.body + 2);
    references.push([box.type, u16(file, box.body), Array.from({ length: count }, (_, i) => u16(file, box.body + 4 + 2 * i))]);
  }
  return {
    topLevel: top.map((box) => box.type),
    majorBrand: text(file, ftyp.body),
    brands,
    primaryId: u16(file, child('pitm').body + 4),
    items,
    references,
  };
}

export function readImageGrid(data: Uint8Array): ImageGrid {
  if (data[0] !== 0) throw new Error(`grid version ${data[0]}`);
  const wide = (data[1] & 1) === 1;
  return {
    rows: data[2] + 1,
    columns: data[3] + 1,
    outputWidth: wide ? u32(data, 4) : u16(data, 4),
    outputHeight: wide ? u32(data, 8) : u16(data, 6),
  };
}

/** The body of an item's property of `type` (null if it has none). */
export function property(item: AvifItem, type: string): Uint8Array | null {
  return item.properties.find((p) => p.type === type)?.body ?? null;
}

export function ispeOf(item: AvifItem): { width: number; height: number } {
  const body = property(item, 'ispe')!;
  return { width: u32(body, 4), height: u32(body, 8) };
}

function readItemInfo(file: Uint8Array, iinf: IsoBox): Map<number, AvifItem> {
  const items = new Map<number, AvifItem>();
  const countSize = file[iinf.body] === 0 ? 2 : 4;
  for (const infe of isoBoxes(file, iinf.body + 4 + countSize, iinf.end)) {
    if (file[infe.body] !== 2) throw new Error(`infe version ${file[infe.body]}`);
    const id = u16(file, infe.body + 4);
    items.set(id, { id, type: text(file, infe.body + 8), hidden: (file[infe.body + 3] & 1) === 1, properties: [], data: new Uint8Array(0) });
  }
  return items;
}

function readAssociations(file: Uint8Array, iprp: IsoBox, items: Map<number, AvifItem>): void {
  const ipco = findBox(file, iprp, 'ipco')!;
  const properties = [...isoBoxes(file, ipco.body, ipco.end)];
  const ipma = findBox(file, iprp, 'ipma')!;
  if (file[ipma.body] !== 0 || (file[ipma.body + 3] & 1) !== 0) throw new Error('ipma other than version 0 with 7-bit indices');
  let at = ipma.body + 8;
  for (let entry = u32(file, ipma.body + 4); entry > 0; entry--) {
    const item = items.get(u16(file, at))!;
    const count = file[at + 2];
    at += 3;
    for (let i = 0; i < count; i++, at++) {
      const box = properties[(file[at] & 0x7f) - 1];
      item.properties.push({ type: box.type, body: file.subarray(box.body, box.end), essential: (file[at] & 0x80) !== 0 });
    }
  }
}

function readLocations(file: Uint8Array, iloc: IsoBox, idat: IsoBox | null, items: Map<number, AvifItem>): void {
  const version = file[iloc.body];
  if (file[iloc.body + 4] !== 0x44 || file[iloc.body + 5] !== 0) throw new Error('iloc other than 4-byte offsets and lengths');
  const count = u16(file, iloc.body + 6);
  let at = iloc.body + 8;
  for (let i = 0; i < count; i++) {
    const id = u16(file, at);
    const method = version === 1 ? u16(file, at + 2) & 15 : 0;
    at += version === 1 ? 6 : 4; // item_ID, [construction_method,] data_reference_index; no base_offset
    if (u16(file, at) !== 1) throw new Error(`item ${id}: not one extent`);
    const offset = (method === 1 ? idat!.body : 0) + u32(file, at + 2);
    items.get(id)!.data = file.subarray(offset, offset + u32(file, at + 6));
    at += 10;
  }
}
