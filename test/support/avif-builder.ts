/**
 * Builds AVIF files for tests from parts: items with their data and properties, references, a
 * primary item. Real AV1 data is taken from corpus files (`av1ItemOf`), so the files decode; the
 * container around it is whatever a test needs (grids of any layout, alpha, clap, damage).
 * Byte arrays are joined as Uint8Arrays, so large files (thousands of items) build quickly.
 */
import { concat } from '../../src/image/bytes';
import { parseAvifContainer } from '../../src/image/formats/avif/container';
import { box, fullBox, text, u16, u32 } from './byte-builders';

export interface ItemSpec {
  id: number;
  type: string;
  /** The item's data, stored in mdat (or idat with `inIdat`). */
  data: Uint8Array;
  /** Property boxes, associated in this order; essential when listed in `essential`. */
  properties?: Uint8Array[];
  essential?: boolean[];
  inIdat?: boolean;
}

export interface AvifSpec {
  primary: number | null;
  items: ItemSpec[];
  references?: { type: string; from: number; to: number[] }[];
  /** Brands after `avif`. */
  brands?: string[];
}

const bytes = (parts: ArrayLike<number>) => Uint8Array.from(parts);

export const ispe = (width: number, height: number) => bytes(fullBox('ispe', 0, 0, u32(width), u32(height)));
export const pixi = (...depths: number[]) => bytes(fullBox('pixi', 0, 0, [depths.length, ...depths]));
export const alphaAuxC = () => bytes(fullBox('auxC', 0, 0, text('urn:mpeg:mpegB:cicp:systems:auxiliary:alpha'), [0]));
export const nclx = (primaries: number, transfer: number, matrix: number, fullRange: boolean) =>
  bytes(box('colr', text('nclx'), u16(primaries), u16(transfer), u16(matrix), [fullRange ? 0x80 : 0]));
/** clap with every fraction given as [numerator, denominator]; offsets may be negative. */
export function clap(width: [number, number], height: [number, number], horizOff: [number, number], vertOff: [number, number]): Uint8Array {
  const i32 = (value: number) => u32(value >>> 0);
  return bytes(box('clap', u32(width[0]), u32(width[1]), u32(height[0]), u32(height[1]), i32(horizOff[0]), u32(horizOff[1]), i32(vertOff[0]), u32(vertOff[1])));
}
/** A grid item's data (HEIF 6.6.2.3.2): 16-bit output sizes unless they need 32. */
export function gridData(rows: number, columns: number, width: number, height: number): Uint8Array {
  const wide = width > 0xffff || height > 0xffff;
  return bytes([0, wide ? 1 : 0, rows - 1, columns - 1, ...(wide ? [...u32(width), ...u32(height)] : [...u16(width), ...u16(height)])]);
}

/** The primary av01 item of a real AVIF: its data, av1C box and size, to build other files from. */
export interface Av1Item {
  data: Uint8Array;
  av1C: Uint8Array;
  width: number;
  height: number;
}

export function av1ItemOf(file: Uint8Array): Av1Item {
  const { color } = parseAvifContainer(file);
  if (color.grid) throw new Error('av1ItemOf: a grid');
  const image = color.tiles[0];
  const data = concat(image.ranges.map(({ start, end }) => file.subarray(start, end)));
  const { start, end } = image.config.obus;
  const av1C = bytes(box('av1C', file.subarray(start - 4, end)));
  return { data, av1C, width: image.size.width, height: image.size.height };
}

/** An av01 item with its ispe and av1C. */
export function av01Item(id: number, item: Av1Item, extra: Uint8Array[] = []): ItemSpec {
  return { id, type: 'av01', data: item.data, properties: [ispe(item.width, item.height), item.av1C, ...extra] };
}

/**
 * ftyp, meta (hdlr, pitm, iinf v1, iloc v1 with 32-bit fields, iprp with one ipco and a 16-bit-index
 * ipma v1, iref, idat) and one mdat holding the items' data in order.
 */
export function buildAvif(spec: AvifSpec): Uint8Array {
  const ftyp = bytes(box('ftyp', text('avif'), u32(0), text('avif'), ...(spec.brands ?? ['mif1', 'miaf']).map(text)));
  const hdlr = bytes(fullBox('hdlr', 0, 0, u32(0), text('pict'), new Array(12).fill(0), [0]));
  const pitm = spec.primary === null ? new Uint8Array(0) : bytes(fullBox('pitm', 1, 0, u32(spec.primary)));
  const infes = spec.items.map((item) => bytes(fullBox('infe', 3, 0, u32(item.id), u16(0), text(item.type), [0])));
  const iinf = fullWrap('iinf', 1, 0, [u32Bytes(spec.items.length), ...infes]);
  const properties: Uint8Array[] = [];
  const associations: Uint8Array[] = [];
  for (const item of spec.items) {
    const indices = (item.properties ?? []).map((property, i) => {
      properties.push(property);
      return (item.essential?.[i] ? 0x8000 : 0) | properties.length;
    });
    associations.push(bytes([...u32(item.id), indices.length, ...indices.flatMap(u16)]));
  }
  const ipma = fullWrap('ipma', 1, 1, [u32Bytes(spec.items.length), ...associations]);
  const iprp = wrap('iprp', [wrap('ipco', properties), ipma]);
  const references = (spec.references ?? []).map((r) => bytes(box(r.type, u32(r.from), u16(r.to.length), ...r.to.map(u32))));
  const iref = references.length ? fullWrap('iref', 1, 0, references) : new Uint8Array(0);
  const idatItems = spec.items.filter((item) => item.inIdat);
  const idat = idatItems.length ? wrap('idat', idatItems.map((item) => item.data)) : new Uint8Array(0);

  const ilocFor = (mdatData: number) => {
    let mdatAt = mdatData;
    let idatAt = 0;
    const entries = spec.items.map((item) => {
      const offset = item.inIdat ? idatAt : mdatAt;
      if (item.inIdat) idatAt += item.data.length;
      else mdatAt += item.data.length;
      return bytes([...u32(item.id), 0, item.inIdat ? 1 : 0, ...u16(0), ...u16(1), ...u32(offset), ...u32(item.data.length)]);
    });
    return fullWrap('iloc', 2, 0, [bytes([0x44, 0x00]), u32Bytes(entries.length), ...entries]);
  };
  const metaFor = (iloc: Uint8Array) => fullWrap('meta', 0, 0, [hdlr, pitm, iinf, iloc, iprp, iref, idat]);
  const mdatItems = spec.items.filter((item) => !item.inIdat);
  const mdatData = ftyp.length + metaFor(ilocFor(0)).length + 8;
  return concat([ftyp, metaFor(ilocFor(mdatData)), wrap('mdat', mdatItems.map((item) => item.data))]);
}

function u32Bytes(value: number): Uint8Array {
  return bytes(u32(value));
}

function wrap(type: string, parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return concat([bytes([...u32(8 + length), ...text(type)]), ...parts]);
}

function fullWrap(type: string, version: number, flags: number, parts: Uint8Array[]): Uint8Array {
  return wrap(type, [bytes([version, (flags >> 16) & 255, (flags >> 8) & 255, flags & 255]), ...parts]);
}
