import { Unzlib } from 'fflate';
import { concat } from '../../bytes';
import { adler32 } from '../../formats/png/crc';

/** Largest inflated profile accepted; real profiles are well under 1 MB. */
export const MAX_INFLATED_PROFILE = 4 * 1024 * 1024;

/**
 * Compressed bytes inflated at a time. Deflate expands a piece at most about 1,032 times, so an
 * inflation bomb is given up within a megabyte past the cap. (The platform's DecompressionStream
 * inflates each chunk written to it whole, with no backpressure: a 1 MB iCCP chunk of zeros became
 * 1 GiB before its first output could be read, and an 8 MB one held 8 GB for 25 s in workerd.)
 */
const PIECE_BYTES = 1024;

/**
 * A PNG iCCP profile's zlib stream inflated, or null when it is corrupt (Adler-32 included) or
 * inflates to more than MAX_INFLATED_PROFILE.
 */
export function inflateProfile(data: Uint8Array): Uint8Array | null {
  const parts: Uint8Array[] = [];
  let total = 0;
  const unzlib = new Unzlib((part) => {
    total += part.length;
    if (total <= MAX_INFLATED_PROFILE) parts.push(part);
  });
  try {
    for (let at = 0; at < data.length && total <= MAX_INFLATED_PROFILE; at += PIECE_BYTES) {
      unzlib.push(data.subarray(at, at + PIECE_BYTES), at + PIECE_BYTES >= data.length);
    }
  } catch {
    return null;
  }
  if (total > MAX_INFLATED_PROFILE || data.length < 6) return null;
  const profile = concat(parts);
  const stored = new DataView(data.buffer, data.byteOffset + data.length - 4, 4).getUint32(0);
  // fflate leaves the Adler-32 unchecked.
  return adler32(profile) === stored ? profile : null;
}
