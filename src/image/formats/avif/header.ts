import { AppError } from '../../../errors';
import { damaged, fourCC, u16be, u32be, u8 } from '../../bytes';
import type { Dimensions } from '../../types';
import { avifContainerWithinDeclaredSizes } from './verify';

export interface IsoBox {
  type: string;
  /** Offset of the box header. */
  start: number;
  /** Offset of the box body (after size, type and any 64-bit size). */
  body: number;
  /** Offset just after the box. */
  end: number;
}

/**
 * Walks the boxes in bytes [from, to). A box that claims more than the space left throws `damaged`
 * when the walk reaches it; size 0 means "to the end", size 1 a 64-bit size.
 */
export function* isoBoxes(bytes: Uint8Array, from: number, to: number): Generator<IsoBox> {
  let at = from;
  while (at < to) {
    if (to - at < 8) throw damaged(`avif: ${to - at} stray bytes at ${at}`);
    let size = u32be(bytes, at);
    const type = fourCC(bytes, at + 4);
    let body = at + 8;
    if (size === 1) {
      if (to - at < 16) throw damaged('avif: short 64-bit box size');
      size = u32be(bytes, at + 8) * 2 ** 32 + u32be(bytes, at + 12);
      body = at + 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < body - at || size > to - at) throw damaged(`avif: box ${JSON.stringify(type)} size ${size}`);
    yield { type, start: at, body, end: at + size };
    at += size;
  }
}

/** The first child box of `type` inside `parent` (skipping `skip` bytes of full-box header), or null. */
export function findBox(bytes: Uint8Array, parent: { body: number; end: number }, type: string, skip = 0): IsoBox | null {
  for (const box of isoBoxes(bytes, parent.body + skip, parent.end)) if (box.type === type) return box;
  return null;
}

/**
 * Width and height of an AVIF file as a viewer shows it before rotation: the primary item's size
 * (a grid's output size) cropped by its clean aperture (`clap`); for an image sequence without a
 * primary item, the first frame's. Read by the container parser the decoder uses (bounded, linear,
 * refusing what the decoder could not follow), so the decoder's output has exactly this size; an
 * AV1 stream that could make frames larger than its declared size is refused here, one that cannot
 * fill it by verifyAvifContainer after the pixel limit (see avifContainerWithinDeclaredSizes).
 * Damage is AppError UNSUPPORTED_FORMAT.
 */
export function readAvifDimensions(bytes: Uint8Array): Dimensions {
  return avifContainerWithinDeclaredSizes(bytes).size;
}

/**
 * The `ipco` property boxes associated with the primary item, in `ipma` order (indices past the end
 * of `ipco` and index 0 are skipped), or null when there is no `meta`/`iprp`/`ipco` or the primary
 * item's association cannot be resolved. Used for `irot`/`imir`; throws `damaged` only for a broken
 * box structure on the way to `meta`.
 */
export function primaryItemProperties(bytes: Uint8Array): IsoBox[] | null {
  const meta = findBox(bytes, { body: 0, end: bytes.length }, 'meta');
  const iprp = meta && findBox(bytes, meta, 'iprp', 4);
  const ipco = iprp && findBox(bytes, iprp, 'ipco');
  if (!meta || !iprp || !ipco) return null;
  const properties = [...isoBoxes(bytes, ipco.body, ipco.end)];
  const indices = primaryPropertyIndices(bytes, meta, iprp);
  return indices && indices.flatMap((index) => (index >= 1 && index <= properties.length ? [properties[index - 1]] : []));
}

/** The item id in `pitm`, or null without one; throws `damaged` for a truncated `pitm`. */
export function readPrimaryItemId(bytes: Uint8Array, meta: IsoBox): number | null {
  const pitm = findBox(bytes, meta, 'pitm', 4);
  if (!pitm) return null;
  const inPitm = bytes.subarray(0, pitm.end);
  return u8(inPitm, pitm.body) === 0 ? u16be(inPitm, pitm.body + 4) : u32be(inPitm, pitm.body + 4);
}

/** 1-based `ipco` indices associated with the primary item, or null when that cannot be resolved. */
function primaryPropertyIndices(bytes: Uint8Array, meta: IsoBox, iprp: IsoBox): number[] | null {
  try {
    const primaryId = readPrimaryItemId(bytes, meta);
    if (primaryId === null) return null;
    for (const ipma of isoBoxes(bytes, iprp.body, iprp.end)) {
      if (ipma.type !== 'ipma') continue;
      const indices = ipmaEntry(bytes.subarray(0, ipma.end), ipma.body, primaryId);
      if (indices) return indices;
    }
    return null;
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

/** The property indices of `itemId` in one `ipma` box (`bytes` ends at the box end), or null. */
function ipmaEntry(bytes: Uint8Array, body: number, itemId: number): number[] | null {
  const version = u8(bytes, body);
  const wideIndex = (u8(bytes, body + 3) & 1) === 1;
  const entries = u32be(bytes, body + 4);
  let at = body + 8;
  for (let e = 0; e < entries; e++) {
    const id = version < 1 ? u16be(bytes, at) : u32be(bytes, at);
    at += version < 1 ? 2 : 4;
    const count = u8(bytes, at++);
    const indices: number[] = [];
    for (let a = 0; a < count; a++) {
      indices.push(wideIndex ? u16be(bytes, at) & 0x7fff : u8(bytes, at) & 0x7f);
      at += wideIndex ? 2 : 1;
    }
    if (id === itemId) return indices;
  }
  return null;
}
