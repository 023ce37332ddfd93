import { concat } from '../../bytes';
import type { ResultSink } from '../../result-sink';

/**
 * Writes an AVIF file (AVIF v1.1 over HEIF ISO/IEC 23008-12 and MIAF ISO/IEC 23000-22) around AV1
 * bitstreams encoded elsewhere: one `av01` item, or a `grid` derived item over equally sized `av01`
 * tiles in raster order, the way phones store large HEIC photos. Each may carry an alpha auxiliary
 * image of the same shape (an `av01` item, or a grid of alpha tiles).
 *
 * Layout: ftyp, meta (hdlr, pitm, iloc, iinf, iref, iprp, idat), mdat. Grid descriptors live in
 * `idat`; the AV1 data in `mdat`, tiles in raster order, colour before alpha.
 */

/** AV1 bitstreams of one plane group (colour or alpha) that share one decoder configuration. */
export interface Av1Items {
  /**
   * The `av1C` body (AV1CodecConfigurationRecord: 4 bytes, then any configOBUs), identical for every
   * tile: libavif refuses grids whose tiles differ in profile, level, tier, depth or subsampling.
   */
  config: Uint8Array;
  /** One AV1 bitstream per tile (sequence header first), raster order; exactly one without a grid. */
  tiles: Uint8Array[];
}

export interface AvifPicture {
  /** The size a viewer shows. */
  width: number;
  height: number;
  /** The grid; 1 x 1 writes a single `av01` item of tileWidth x tileHeight = width x height. */
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
  color: Av1Items;
  alpha: Av1Items | null;
}

/**
 * The `colr` nclx that jSquash's libavif encoder writes and its AV1 sequence headers carry:
 * primaries and transfer unspecified (viewers assume sRGB), BT.601 matrix, full range.
 */
export const AVIF_NCLX = { primaries: 2, transfer: 2, matrix: 6, fullRange: true } as const;

const ALPHA_URN = 'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha';

/** Item ids: the primary first, then its tiles, then the alpha image and its tiles. */
interface ItemPlan {
  colorId: number;
  colorTileIds: number[];
  alphaId: number | null;
  alphaTileIds: number[];
}

/** Writes the file into `output` front to back, the boxes and then one tile at a time, draining between. */
export async function writeAvif(picture: AvifPicture, output: ResultSink): Promise<void> {
  checkPicture(picture);
  const plan = planItems(picture);
  const ftyp = fileType(picture);
  // iloc offsets are fixed-width fields, so meta's size does not depend on where mdat starts.
  const metaSize = meta(picture, plan, 0).length;
  const mdatBody = ftyp.length + metaSize + 8;
  const payloads = [...picture.color.tiles, ...(picture.alpha?.tiles ?? [])];
  const mdatSize = 8 + payloads.reduce((sum, data) => sum + data.length, 0);
  output.write(concat([ftyp, meta(picture, plan, mdatBody), u32(mdatSize), ascii('mdat')]));
  for (const data of payloads) {
    await output.drain();
    output.write(data);
  }
  await output.drain();
}

function checkPicture(picture: AvifPicture): void {
  const { width, height, columns, rows, tileWidth, tileHeight, color, alpha } = picture;
  const tiles = columns * rows;
  if (color.tiles.length !== tiles || (alpha && alpha.tiles.length !== tiles)) {
    throw new Error(`avif writer: ${columns}x${rows} grid needs ${tiles} tiles per plane group`);
  }
  if (tiles === 1 && (tileWidth !== width || tileHeight !== height)) throw new Error('avif writer: a single item must be the image size');
  // HEIF 6.6.2.3: 8-bit rows/columns fields; the tiles cover the canvas and the last ones overlap it.
  if (columns > 256 || rows > 256) throw new Error(`avif writer: ${columns}x${rows} tiles, at most 256 per axis`);
  const canvas = gridCanvas(picture);
  if (tileWidth * columns < canvas.width || tileWidth * (columns - 1) >= canvas.width || tileHeight * rows < canvas.height || tileHeight * (rows - 1) >= canvas.height) {
    throw new Error(`avif writer: ${columns}x${rows} tiles of ${tileWidth}x${tileHeight} do not fit ${canvas.width}x${canvas.height}`);
  }
}

/**
 * The size a grid of `width` x `height` is reconstructed at before `clap` crops it: MIAF 7.3.11.4.2
 * wants even grid sizes for 4:2:0 (libavif refuses odd ones) and tiles of at least 64 px, which our
 * own header check (header/avif-items.ts) does not allow to be larger than the grid. So an odd side
 * is rounded up and a side under 64 px grows to 64; the padding repeats the image's edge.
 */
export function gridCanvasSize(width: number, height: number): { width: number; height: number } {
  const side = (length: number) => Math.max(MIN_GRID_SIDE, length + (length % 2));
  return { width: side(width), height: side(height) };
}

/** MIAF 7.3.11.4.2: grid tiles are at least 64 x 64. */
export const MIN_GRID_SIDE = 64;

function gridCanvas(picture: AvifPicture): { width: number; height: number } {
  if (picture.columns * picture.rows === 1) return { width: picture.width, height: picture.height };
  return gridCanvasSize(picture.width, picture.height);
}

function planItems(picture: AvifPicture): ItemPlan {
  const tiles = picture.columns * picture.rows;
  const isGrid = tiles > 1;
  const colorTileIds = isGrid ? range(2, tiles) : [];
  let next = isGrid ? 2 + tiles : 2;
  const alphaId = picture.alpha ? next++ : null;
  const alphaTileIds = picture.alpha && isGrid ? range(next, tiles) : [];
  return { colorId: 1, colorTileIds, alphaId, alphaTileIds };
}

function fileType(picture: AvifPicture): Uint8Array {
  const brands = ['avif', 'mif1', 'miaf'];
  // AVIF Baseline profile: AV1 Main profile at level 5.1 or lower for every coded item.
  const configs = [picture.color.config, ...(picture.alpha ? [picture.alpha.config] : [])];
  if (configs.every((config) => config[1] >> 5 === 0 && (config[1] & 31) <= 13)) brands.push('MA1B');
  return box('ftyp', ascii('avif'), u32(0), ...brands.map(ascii));
}

function meta(picture: AvifPicture, plan: ItemPlan, mdatBody: number): Uint8Array {
  const isGrid = plan.colorTileIds.length > 0;
  const gridDescriptor = isGrid ? imageGrid(picture) : null;
  return fullBox(
    'meta',
    0,
    0,
    fullBox('hdlr', 0, 0, u32(0), ascii('pict'), u32(0), u32(0), u32(0), new Uint8Array([0])),
    fullBox('pitm', 0, 0, u16(plan.colorId)),
    itemLocations(picture, plan, mdatBody, gridDescriptor),
    itemInfo(plan),
    itemReferences(plan),
    itemProperties(picture, plan),
    ...(gridDescriptor ? [box('idat', gridDescriptor, ...(plan.alphaId === null ? [] : [gridDescriptor]))] : []),
  );
}

/** ImageGrid (HEIF 6.6.2.3.2), stored in idat. */
function imageGrid(picture: AvifPicture): Uint8Array {
  const canvas = gridCanvas(picture);
  const wide = canvas.width > 0xffff || canvas.height > 0xffff;
  const size = wide ? [u32(canvas.width), u32(canvas.height)] : [u16(canvas.width), u16(canvas.height)];
  return concat([new Uint8Array([0, wide ? 1 : 0, picture.rows - 1, picture.columns - 1]), ...size]);
}

/**
 * iloc version 1 (construction_method: 0 = file offset, 1 = idat offset), 4-byte offsets and lengths,
 * one extent per item.
 */
function itemLocations(picture: AvifPicture, plan: ItemPlan, mdatBody: number, gridDescriptor: Uint8Array | null): Uint8Array {
  const entries: Uint8Array[] = [];
  const entry = (id: number, method: number, offset: number, length: number) =>
    entries.push(concat([u16(id), u16(method), u16(0), u16(1), u32(offset), u32(length)]));
  let at = mdatBody;
  const inMdat = (ids: number[], datas: Uint8Array[]) =>
    datas.forEach((data, i) => {
      entry(ids[i], 0, at, data.length);
      at += data.length;
    });
  if (gridDescriptor) {
    entry(plan.colorId, 1, 0, gridDescriptor.length);
    inMdat(plan.colorTileIds, picture.color.tiles);
    if (plan.alphaId !== null) {
      entry(plan.alphaId, 1, gridDescriptor.length, gridDescriptor.length);
      inMdat(plan.alphaTileIds, picture.alpha!.tiles);
    }
  } else {
    inMdat([plan.colorId], picture.color.tiles);
    if (plan.alphaId !== null) inMdat([plan.alphaId], picture.alpha!.tiles);
  }
  return fullBox('iloc', 1, 0, new Uint8Array([0x44, 0x00]), u16(entries.length), ...entries);
}

function itemInfo(plan: ItemPlan): Uint8Array {
  const isGrid = plan.colorTileIds.length > 0;
  // Tiles are hidden items (flags bit 0): no reader should offer one as an image of its own.
  const infe = (id: number, type: string, hidden: boolean) => fullBox('infe', 2, hidden ? 1 : 0, u16(id), u16(0), ascii(type), new Uint8Array([0]));
  const entries = [infe(plan.colorId, isGrid ? 'grid' : 'av01', false), ...plan.colorTileIds.map((id) => infe(id, 'av01', true))];
  if (plan.alphaId !== null) {
    entries.push(infe(plan.alphaId, isGrid ? 'grid' : 'av01', false), ...plan.alphaTileIds.map((id) => infe(id, 'av01', true)));
  }
  return fullBox('iinf', 0, 0, u16(entries.length), ...entries);
}

function itemReferences(plan: ItemPlan): Uint8Array {
  const reference = (type: string, from: number, to: number[]) => box(type, u16(from), u16(to.length), ...to.map(u16));
  const references: Uint8Array[] = [];
  if (plan.colorTileIds.length > 0) references.push(reference('dimg', plan.colorId, plan.colorTileIds));
  if (plan.alphaId !== null) {
    if (plan.alphaTileIds.length > 0) references.push(reference('dimg', plan.alphaId, plan.alphaTileIds));
    references.push(reference('auxl', plan.alphaId, [plan.colorId]));
  }
  return references.length > 0 ? fullBox('iref', 0, 0, ...references) : new Uint8Array(0);
}

/**
 * ipco holds each property once; ipma associates them (descriptive first, then transformative, as
 * HEIF 6.5.1 asks). av1C and clap are essential: a reader that does not understand them must not
 * show the item.
 */
function itemProperties(picture: AvifPicture, plan: ItemPlan): Uint8Array {
  const properties: Uint8Array[] = [];
  const add = (property: Uint8Array) => properties.push(property);
  const isGrid = plan.colorTileIds.length > 0;
  const canvas = gridCanvas(picture);
  add(ispe(picture.tileWidth, picture.tileHeight)); // 1
  add(pixi(3)); // 2
  add(box('av1C', picture.color.config)); // 3
  add(colr()); // 4
  if (isGrid) add(ispe(canvas.width, canvas.height)); // 5
  const clapIndex = isGrid && (canvas.width !== picture.width || canvas.height !== picture.height) ? add(clap(picture, canvas)) : 0;
  let alphaIndex = 0;
  if (picture.alpha) {
    alphaIndex = properties.length + 1;
    add(pixi(1)); // alphaIndex
    add(box('av1C', picture.alpha.config)); // alphaIndex + 1
    add(fullBox('auxC', 0, 0, ascii(ALPHA_URN), new Uint8Array([0]))); // alphaIndex + 2
  }
  if (properties.length > 127) throw new Error('avif writer: too many properties for 7-bit ipma indices');

  const essential = (index: number) => 0x80 | index;
  const associations: [number, number[]][] = [];
  const tileSize = 1;
  const gridSize = isGrid ? 5 : 1;
  const colorTile = [tileSize, 2, essential(3), 4];
  if (isGrid) {
    associations.push([plan.colorId, [gridSize, 2, 4, ...(clapIndex ? [essential(clapIndex)] : [])]]);
    for (const id of plan.colorTileIds) associations.push([id, colorTile]);
  } else {
    associations.push([plan.colorId, colorTile]);
  }
  if (plan.alphaId !== null) {
    const [alphaPixi, alphaConfig, auxC] = [alphaIndex, alphaIndex + 1, alphaIndex + 2];
    if (isGrid) {
      associations.push([plan.alphaId, [gridSize, alphaPixi, auxC]]);
      for (const id of plan.alphaTileIds) associations.push([id, [tileSize, alphaPixi, essential(alphaConfig), auxC]]);
    } else {
      associations.push([plan.alphaId, [tileSize, alphaPixi, essential(alphaConfig), auxC]]);
    }
  }
  const ipma = fullBox(
    'ipma',
    0,
    0,
    u32(associations.length),
    ...associations.map(([id, indices]) => concat([u16(id), new Uint8Array([indices.length, ...indices])])),
  );
  return box('iprp', box('ipco', ...properties), ipma);
}

function ispe(width: number, height: number): Uint8Array {
  return fullBox('ispe', 0, 0, u32(width), u32(height));
}

function pixi(channels: number): Uint8Array {
  return fullBox('pixi', 0, 0, new Uint8Array([channels, ...new Array<number>(channels).fill(8)]));
}

function colr(): Uint8Array {
  const { primaries, transfer, matrix, fullRange } = AVIF_NCLX;
  return box('colr', ascii('nclx'), u16(primaries), u16(transfer), u16(matrix), new Uint8Array([fullRange ? 0x80 : 0]));
}

/**
 * Clean aperture (ISO 14496-12 12.1.4) keeping the top-left width x height of the canvas: its centre
 * is offset from the canvas centre by (width - canvasWidth) / 2.
 */
function clap(picture: AvifPicture, canvas: { width: number; height: number }): Uint8Array {
  const offset = (shown: number, coded: number) => [i32(shown - coded), u32(2)];
  return box(
    'clap',
    u32(picture.width),
    u32(1),
    u32(picture.height),
    u32(1),
    ...offset(picture.width, canvas.width),
    ...offset(picture.height, canvas.height),
  );
}

function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const body = concat(parts);
  return concat([u32(8 + body.length), ascii(type), body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Uint8Array {
  return box(type, new Uint8Array([version, flags >> 16, (flags >> 8) & 255, flags & 255]), ...parts);
}

function u16(value: number): Uint8Array {
  return new Uint8Array([value >> 8, value & 255]);
}

function u32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

function i32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, value);
  return bytes;
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

