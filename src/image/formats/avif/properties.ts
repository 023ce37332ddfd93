import { damaged } from '../../bytes';
import type { IsoBox } from './boxes';
import type { Dimensions } from '../../types';
import { FieldReader } from './boxes';
import { unsupportedAvif } from './limits';

/** An item's associated property box, with the `ipma` essential flag. */
export interface PropertyLink {
  box: IsoBox;
  essential: boolean;
}

/** av1C (AV1-ISOBMFF 2.3.3): what the item's AV1 data must decode to. */
export interface Av1Config {
  profile: number;
  bitDepth: 8 | 10 | 12;
  monochrome: boolean;
  subsamplingX: 0 | 1;
  subsamplingY: 0 | 1;
  /** Offset and end of the configOBUs in the file (a sequence header, usually). */
  obus: { start: number; end: number };
}

/** Colour code points of an `nclx` colr (ITU-T H.273). */
export interface Nclx {
  primaries: number;
  transfer: number;
  matrix: number;
  fullRange: boolean;
}

/** clap (ISO/IEC 14496-12 12.1.4) as its eight fractions; signed offsets. */
export interface CleanAperture {
  widthN: number;
  widthD: number;
  heightN: number;
  heightD: number;
  horizOffN: number;
  horizOffD: number;
  vertOffN: number;
  vertOffD: number;
}

/**
 * Properties a reader may not ignore when marked essential: the ones this decoder applies (or the
 * pipeline does: irot/imir as EXIF orientation, colr through the colour stage), and descriptive
 * ones that change nothing in the pixels (pasp, clli, mdcv, cclv, a1lx: a progressive item decodes
 * to its last, full layer).
 */
const UNDERSTOOD = new Set(['ispe', 'av1C', 'pixi', 'colr', 'clap', 'irot', 'imir', 'auxC', 'pasp', 'clli', 'mdcv', 'cclv', 'a1lx']);

/** Refuses an item whose essential properties include one this decoder cannot honour. */
export function checkEssentialProperties(itemId: number, links: readonly PropertyLink[]): void {
  for (const { box, essential } of links) {
    if (!essential || UNDERSTOOD.has(box.type)) continue;
    if (box.type === 'a1op' || box.type === 'lsel') throw unsupportedAvif('scalable AV1 images (operating point or layer selection)');
    throw unsupportedAvif(`an essential property of type "${printable(box.type)}" on item ${itemId}`);
  }
}

export function findProperty(links: readonly PropertyLink[], type: string): IsoBox | null {
  for (const link of links) if (link.box.type === type) return link.box;
  return null;
}

export function readIspe(bytes: Uint8Array, box: IsoBox): Dimensions {
  const r = FieldReader.of(bytes, box, 4);
  const size = { width: r.u32(), height: r.u32() };
  if (size.width === 0 || size.height === 0) throw damaged(`avif: ispe ${size.width}x${size.height}`);
  return size;
}

export function readAv1Config(bytes: Uint8Array, box: IsoBox): Av1Config {
  const r = FieldReader.of(bytes, box);
  const markerAndVersion = r.u8();
  if (markerAndVersion !== 0x81) throw damaged(`avif: av1C marker/version ${markerAndVersion}`);
  const profile = r.u8() >> 5;
  const flags = r.u8();
  r.u8(); // initial_presentation_delay
  const highBitDepth = (flags & 0x40) !== 0;
  const twelveBit = (flags & 0x20) !== 0;
  if (profile > 2) throw damaged(`avif: av1C seq_profile ${profile}`);
  return {
    profile,
    bitDepth: twelveBit ? 12 : highBitDepth ? 10 : 8,
    monochrome: (flags & 0x10) !== 0,
    subsamplingX: ((flags >> 3) & 1) as 0 | 1,
    subsamplingY: ((flags >> 2) & 1) as 0 | 1,
    obus: { start: r.at, end: box.end },
  };
}

/** The `nclx` colr among `links`, or null (ICC colr boxes are the colour stage's business). */
export function readNclx(bytes: Uint8Array, links: readonly PropertyLink[]): Nclx | null {
  for (const { box } of links) {
    if (box.type !== 'colr') continue;
    const r = FieldReader.of(bytes, box);
    if (r.fourCC() !== 'nclx') continue;
    return { primaries: r.u16(), transfer: r.u16(), matrix: r.u16(), fullRange: (r.u8() & 0x80) !== 0 };
  }
  return null;
}

export function readCleanAperture(bytes: Uint8Array, box: IsoBox): CleanAperture {
  const r = FieldReader.of(bytes, box);
  return {
    widthN: r.u32(),
    widthD: r.u32(),
    heightN: r.u32(),
    heightD: r.u32(),
    horizOffN: r.i32(),
    horizOffD: r.u32(),
    vertOffN: r.i32(),
    vertOffD: r.u32(),
  };
}

const ALPHA_URNS = new Set(['urn:mpeg:mpegB:cicp:systems:auxiliary:alpha', 'urn:mpeg:hevc:2015:auxid:1']);

/** True when `auxC` names the item an alpha plane (the AVIF URN or HEVC's, which libavif accepts too). */
export function isAlphaAuxiliary(bytes: Uint8Array, links: readonly PropertyLink[]): boolean {
  const auxC = findProperty(links, 'auxC');
  return auxC !== null && isAlphaUrn(bytes, auxC);
}

/** An `auxC` (or a track's `auxi`) naming alpha: a full box holding a null-terminated URN. */
export function isAlphaUrn(bytes: Uint8Array, box: IsoBox): boolean {
  return ALPHA_URNS.has(FieldReader.of(bytes, box, 4).cString());
}

function printable(type: string): string {
  return type.replace(/[^\x20-\x7e]/g, '?');
}
