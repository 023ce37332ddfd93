import { AppError } from '../../../errors';
import { damaged, fourCC, need, u32be, u8 } from '../../bytes';
import type { Vec3 } from './colorimetry';

/**
 * The ICC profile header and tag directory (ICC.1:2010 sections 7.2 and 7.3). Tags stay views into
 * the profile bytes, bounds-checked against the profile size; the tag readers in icc-curve.ts and
 * icc-lut.ts read through the bounds-checked readers of ../bytes, so a hostile profile ends in
 * `damaged` (caught by `readable`) instead of reading past a tag.
 */

export interface IccProfile {
  /** Data colour space signature: 'RGB ', 'GRAY', 'CMYK', ... */
  colorSpace: string;
  /** Profile connection space: 'XYZ ' or 'Lab '. */
  pcs: 'XYZ ' | 'Lab ';
  /** Major version (2 or 4). */
  version: number;
  /** Tag data by signature; shared tags are the same view. */
  tags: Map<string, Uint8Array>;
}

const HEADER_SIZE = 128;
/** Real profiles have a few dozen tags; anything above this is not a profile worth reading. */
const MAX_TAGS = 1024;

/** The header and tag table, or null for anything that is not a well-formed profile. */
export function parseIccProfile(bytes: Uint8Array): IccProfile | null {
  return readable(() => {
    const size = u32be(bytes, 0);
    if (size < HEADER_SIZE + 4 || size > bytes.length || fourCC(bytes, 36) !== 'acsp') return null;
    const profile = bytes.subarray(0, size);
    const pcs = fourCC(profile, 20);
    if (pcs !== 'XYZ ' && pcs !== 'Lab ') return null;
    const count = u32be(profile, HEADER_SIZE);
    if (count > MAX_TAGS) return null;
    need(profile, HEADER_SIZE + 4, count * 12, 'icc: tag table');
    const tags = new Map<string, Uint8Array>();
    for (let i = 0; i < count; i++) {
      const entry = HEADER_SIZE + 4 + i * 12;
      const signature = fourCC(profile, entry);
      const offset = u32be(profile, entry + 4);
      const length = u32be(profile, entry + 8);
      need(profile, offset, length, `icc: tag ${signature}`);
      if (!tags.has(signature)) tags.set(signature, profile.subarray(offset, offset + length));
    }
    return { colorSpace: fourCC(profile, 16), pcs, version: u8(profile, 8), tags };
  });
}

/** Runs a reader of profile bytes; a `damaged` error (a read out of bounds) means "unusable": null. */
export function readable<T>(read: () => T | null): T | null {
  try {
    return read();
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

/** s15Fixed16Number at `offset`. */
export function s15Fixed16(bytes: Uint8Array, offset: number): number {
  return (u32be(bytes, offset) | 0) / 65536;
}

/** The type signature a tag starts with. */
export function tagType(tag: Uint8Array): string {
  return fourCC(tag, 0);
}

/** An XYZType tag's first value (rXYZ, wtpt, ...), or null when absent. Throws `damaged` if malformed. */
export function readXyzTag(profile: IccProfile, signature: string): Vec3 | null {
  const tag = profile.tags.get(signature);
  if (!tag) return null;
  if (tagType(tag) !== 'XYZ ') throw damaged(`icc: tag ${signature} is not XYZType`);
  return [s15Fixed16(tag, 8), s15Fixed16(tag, 12), s15Fixed16(tag, 16)];
}
