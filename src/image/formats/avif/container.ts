import type { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import type { Region } from '../../operations';
import type { Dimensions } from '../../types';
import { childBoxes, FieldReader, singleChild, type IsoBox } from './boxes';
import { cleanApertureCrop } from './clean-aperture';
import { AVIF_LIMITS, tooMany, unsupportedAvif } from './limits';
import { itemRanges, readMeta, type MetaIndex, type MetaItem } from './meta';
import {
  checkEssentialProperties, findProperty, isAlphaAuxiliary, isAlphaUrn, readAv1Config, readCleanAperture, readIspe, readNclx,
  type Av1Config, type Nclx, type PropertyLink,
} from './properties';
import type { SequenceHeader } from './sequence-header';
import { readSampleChunks, readTracks, type SampleChunk, type TrackFrame } from './tracks';

export interface ByteRange {
  start: number;
  end: number;
}

/** One AV1 image: a still item, a grid tile, or a sequence's first sample. */
export interface Av1Image {
  /** Item id (track id for a sequence), for messages. */
  id: number;
  /** Its data: these ranges of the file, joined. */
  ranges: ByteRange[];
  byteLength: number;
  /** The size its frame must decode to, */
  size: Dimensions;
  /** declared by its ispe, or by the track's sample entry. */
  sizeFrom: 'ispe' | 'sample entry';
  config: Av1Config;
  /** The AV1 sequence headers at the head of its data and in its av1C (null: none there), read with the header (verify.ts). */
  sequence?: SequenceHeader | null;
  configSequence?: SequenceHeader | null;
  /** Its frame may use intra block copy (sequence-header.ts firstFrameMayCopyIntraBlocks), read with the header. */
  mayCopyIntraBlocks?: boolean;
}

export interface GridLayout {
  rows: number;
  columns: number;
  tileWidth: number;
  tileHeight: number;
}

/** The colour image or its alpha plane: one AV1 image, or a grid of them (HEIF 6.6.2.3). */
export interface AvifLayer {
  /** Size of the reconstructed image (a grid's output size). */
  size: Dimensions;
  grid: GridLayout | null;
  /** One image, or the grid's tiles row by row. */
  tiles: Av1Image[];
  /** The first tile's av1C (a hint: the decoder takes the format from the AV1 stream). */
  config: Av1Config;
}

/** What decoding an AVIF file takes, read from its container alone. */
export interface AvifContainer {
  color: AvifLayer;
  alpha: AvifLayer | null;
  /** The colour was multiplied by alpha before encoding (`prem`): it is divided back. */
  premultiplied: boolean;
  /** The container's colour code points, which override the AV1 stream's (ISO 14496-12 12.1.5.1). */
  nclx: Nclx | null;
  /** The clean aperture (`clap`) in coded pixels, or null for the whole image. */
  crop: Region | null;
  /** The size shown: the crop's, else the colour layer's. */
  size: Dimensions;
  /** Where the image came from: the primary item, or the first frame of a sequence without one. */
  source: 'item' | 'track';
  /** The properties of the image shown: the primary item's, or the colour track's sample entry boxes. */
  properties: PropertyLink[];
  /** The file's boxes as the lossless strip rewrites them. */
  top: IsoBox[];
  meta: MetaIndex | null;
  /** An image sequence's `moov` and its tracks' chunks (or why they cannot be followed). */
  moov: { box: IsoBox; chunks: SampleChunk[] | AppError } | null;
}

/**
 * Parses the container of an AVIF file as far as decoding needs, and refuses (AppError
 * UNSUPPORTED_FORMAT) everything the decoder could not follow: damage, features it lacks, and
 * structures larger than AVIF_LIMITS. Linear in the file: every list is read once into maps.
 *
 * A file with a primary item (`pitm`) is decoded from it, also when it is an image sequence (libavif
 * writes the first frame as the primary item); a sequence without one from its first av01 track.
 */
export function parseAvifContainer(bytes: Uint8Array): AvifContainer {
  return avifContainer.parse(bytes);
}

/** The parser as an object's method, so that a test can count its use (one parse per upload). */
export const avifContainer = { parse: parse };

function parse(bytes: Uint8Array): AvifContainer {
  const top = childBoxes(bytes, { body: 0, end: bytes.length });
  if (top[0]?.type !== 'ftyp') throw damaged('avif: no leading ftyp');
  const meta = singleChild(top, 'meta');
  const moov = singleChild(top, 'moov');
  const index = meta ? readMeta(bytes, meta) : null;
  const structure = { top, meta: index, moov: moov && { box: moov, chunks: readSampleChunks(bytes, moov) } };
  if (index && index.primaryId !== null) return { ...fromPrimaryItem(bytes, index, index.primaryId), ...structure };
  if (moov) return { ...fromTracks(bytes, moov), ...structure };
  throw damaged('avif: no primary item and no image sequence');
}

type ShownImage = Omit<AvifContainer, 'top' | 'meta' | 'moov'>;

function fromPrimaryItem(bytes: Uint8Array, index: MetaIndex, primaryId: number): ShownImage {
  const primary = index.items.get(primaryId);
  if (!primary) throw damaged(`avif: primary item ${primaryId} is not declared`);
  const color = readLayer(bytes, index, primary);
  const alphaItem = findAlphaItem(bytes, index, primaryId);
  const alpha = alphaItem ? readLayer(bytes, index, alphaItem) : null;
  if (alpha) checkAlphaSize(color, alpha);
  const premultiplied = alphaItem !== null && (index.references.get('prem')?.get(primaryId) ?? []).includes(alphaItem.id);
  return finish(bytes, color, alpha, premultiplied, primary.properties, 'item');
}

/** The first alpha auxiliary image (auxl to the primary, auxC alpha); other auxiliary images are ignored. */
function findAlphaItem(bytes: Uint8Array, index: MetaIndex, primaryId: number): MetaItem | null {
  for (const [from, to] of index.references.get('auxl') ?? []) {
    if (!to.includes(primaryId)) continue;
    const item = index.items.get(from);
    if (item && isAlphaAuxiliary(bytes, item.properties)) return item;
  }
  return null;
}

function readLayer(bytes: Uint8Array, index: MetaIndex, item: MetaItem): AvifLayer {
  checkEssentialProperties(item.id, item.properties);
  if (item.type === 'av01') {
    const image = readAv1Item(bytes, index, item);
    return { size: image.size, grid: null, tiles: [image], config: image.config };
  }
  if (item.type === 'grid') return readGrid(bytes, index, item);
  throw unsupportedAvif(`an image item of type "${item.type.replace(/[^\x20-\x7e]/g, '?')}"`);
}

function readAv1Item(bytes: Uint8Array, index: MetaIndex, item: MetaItem): Av1Image {
  const ispe = findProperty(item.properties, 'ispe');
  const av1C = findProperty(item.properties, 'av1C');
  if (!ispe) throw damaged(`avif: item ${item.id} has no ispe`);
  if (!av1C) throw damaged(`avif: item ${item.id} has no av1C`);
  const config = readAv1Config(bytes, av1C);
  const ranges = itemRanges(bytes, index, item);
  return { id: item.id, ranges, byteLength: ranges.reduce((sum, range) => sum + range.end - range.start, 0), size: readIspe(bytes, ispe), sizeFrom: 'ispe', config };
}

/**
 * ImageGrid (HEIF 6.6.2.3): rows x columns `av01` tiles (the item's `dimg` references, row by row)
 * of one size, placed edge to edge and cut to the output size, which the last row
 * and column must reach into (libavif's rule). A grid's ispe is its output size.
 */
function readGrid(bytes: Uint8Array, index: MetaIndex, item: MetaItem): AvifLayer {
  const ranges = itemRanges(bytes, index, item);
  const descriptor = new FieldReader(bytes, ranges[0].start, ranges[0].end, `grid ${item.id}`);
  if (descriptor.u8() !== 0) throw damaged(`avif: grid ${item.id} version`);
  const wide = (descriptor.u8() & 1) === 1;
  const rows = descriptor.u8() + 1;
  const columns = descriptor.u8() + 1;
  const output = wide ? { width: descriptor.u32(), height: descriptor.u32() } : { width: descriptor.u16(), height: descriptor.u16() };
  const ispe = findProperty(item.properties, 'ispe');
  if (!ispe) throw damaged(`avif: grid ${item.id} has no ispe`);
  const declared = readIspe(bytes, ispe);
  if (declared.width !== output.width || declared.height !== output.height) {
    throw damaged(`avif: grid ${item.id} output ${show(output)} differs from its ispe ${show(declared)}`);
  }
  const tileIds = index.references.get('dimg')?.get(item.id) ?? [];
  if (tileIds.length !== rows * columns) throw damaged(`avif: grid ${item.id} needs ${rows * columns} tiles, has ${tileIds.length}`);
  const tiles = tileIds.map((id) => {
    const tile = index.items.get(id);
    if (tile?.type !== 'av01') throw damaged(`avif: grid ${item.id} tile ${id} is not an av01 item`);
    checkEssentialProperties(id, tile.properties);
    return readAv1Item(bytes, index, tile);
  });
  const first = tiles[0];
  for (const tile of tiles) {
    if (tile.size.width !== first.size.width || tile.size.height !== first.size.height) throw damaged(`avif: grid ${item.id} tiles differ in size`);
  }
  const { width: tileWidth, height: tileHeight } = first.size;
  checkGridSide(item.id, 'columns', columns, tileWidth, output.width);
  checkGridSide(item.id, 'rows', rows, tileHeight, output.height);
  return { size: output, grid: { rows, columns, tileWidth, tileHeight }, tiles, config: first.config };
}

/**
 * Tiles must cover the output with the last one starting inside it; a lone tile may be larger than
 * the output (encoders pad small images to the 64 px minimum tile), up to twice its side or 128 px,
 * so a tiny output cannot hide a huge tile.
 */
function checkGridSide(id: number, what: string, count: number, tile: number, output: number): void {
  const covers = tile * count >= output && tile * (count - 1) < output;
  if (!covers || tile > Math.max(2 * output, 128)) {
    throw damaged(`avif: grid ${id} ${what}: ${count} tiles of ${tile} px do not match an output of ${output} px`);
  }
}

function checkAlphaSize(color: AvifLayer, alpha: AvifLayer): void {
  if (alpha.size.width !== color.size.width || alpha.size.height !== color.size.height) {
    throw damaged(`avif: alpha ${show(alpha.size)} differs from the image ${show(color.size)}`);
  }
}

function fromTracks(bytes: Uint8Array, moov: IsoBox): ShownImage {
  const tracks = readTracks(bytes, moov);
  const colorTrack = tracks.find((track) => track.auxiliaryFor.length === 0);
  if (!colorTrack) throw damaged('avif: image sequence without an av01 colour track');
  const alphaTrack = tracks.find((track) => track.auxiliaryFor.includes(colorTrack.trackId) && isAlphaTrack(bytes, track)) ?? null;
  const color = trackLayer(bytes, colorTrack);
  const alpha = alphaTrack && trackLayer(bytes, alphaTrack);
  if (alpha) checkAlphaSize(color, alpha);
  const premultiplied = alphaTrack !== null && colorTrack.premultipliedBy.includes(alphaTrack.trackId);
  return finish(bytes, color, alpha, premultiplied, colorTrack.properties, 'track');
}

/** An auxiliary track is alpha unless its `auxi` box names another auxiliary type. */
function isAlphaTrack(bytes: Uint8Array, track: TrackFrame): boolean {
  const auxi = findProperty(track.properties, 'auxi');
  if (!auxi) return true;
  return isAlphaUrn(bytes, auxi);
}

function trackLayer(bytes: Uint8Array, track: TrackFrame): AvifLayer {
  const av1C = findProperty(track.properties, 'av1C');
  if (!av1C) throw damaged(`avif: track ${track.trackId} has no av1C`);
  const config = readAv1Config(bytes, av1C);
  const image: Av1Image = { id: track.trackId, ranges: [track.range], byteLength: track.range.end - track.range.start, size: track.size, sizeFrom: 'sample entry', config };
  return { size: track.size, grid: null, tiles: [image], config };
}

function finish(bytes: Uint8Array, color: AvifLayer, alpha: AvifLayer | null, premultiplied: boolean, properties: PropertyLink[], source: AvifContainer['source']): ShownImage {
  let data = 0;
  for (const layer of [color, alpha]) for (const image of layer?.tiles ?? []) data += image.byteLength;
  const limit = AVIF_LIMITS.dataPerFileByte * bytes.length;
  if (data > limit) throw tooMany(`bytes of image data in a file of ${bytes.length.toLocaleString('en-US')} bytes`, data, limit);
  const clap = findProperty(properties, 'clap');
  const crop = clap && cleanApertureCrop(readCleanAperture(bytes, clap), color.size);
  return {
    color,
    alpha,
    premultiplied,
    nclx: readNclx(bytes, properties),
    crop,
    size: crop ? { width: crop.width, height: crop.height } : color.size,
    source,
    properties,
  };
}

export function show(size: Dimensions): string {
  return `${size.width}x${size.height}`;
}
