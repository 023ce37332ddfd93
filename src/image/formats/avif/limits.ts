import { AppError } from '../../../errors';

/*
 * How much structure an AVIF file may declare before it is refused, in the spirit of libheif's
 * `heif_security_limits` (defaults: 1000 items, 32 iloc extents per item, 100 children per box).
 * Parsing is linear in the file anyway; the limits keep a small hostile file from declaring
 * hundreds of thousands of items, extents or references that a reader then walks (libavif's item
 * lookups made 65,000 unreferenced items cost 7.5 s). Cameras and encoders stay far below them: a
 * 48 MP HEIF grid of 512 px tiles has 192 tiles.
 */
export const AVIF_LIMITS = {
  /** `infe` entries, `iloc` entries, `ipma` entries, and so also grid tiles. */
  items: 1000,
  /** `iloc` extents of one item. */
  extentsPerItem: 32,
  /** `ipco` properties (every item may need its own ispe, pixi, av1C... when an encoder does not share them). */
  properties: 1000,
  /** Reference boxes in `iref`, and item ids in one of them. */
  references: 1000,
  /** Children of any other box (`meta`, `iprp`, `moov`, `trak`...), and top-level boxes. */
  childrenPerBox: 100,
  /** Sample entries in a track's `stsd`. */
  sampleEntries: 32,
  /** Chunks of samples of an image sequence's tracks, together: an hour of video at 30 fps, one frame a chunk, is 108,000. */
  sampleChunks: 200_000,
  /**
   * Bytes of AV1 data the images to decode may add up to, per byte of the file: tiles may share
   * data (an encoder may store identical tiles once), but 1,000 tiles each reading a 10 MB extent
   * "to the end of the file" would copy 10 GB into the decoder.
   */
  dataPerFileByte: 16,
} as const;

/**
 * The refusal of a file that has more of something than any real AVIF file: `count` as declared,
 * or null when the walk stopped at the first one over the limit.
 */
export function tooMany(what: string, count: number | null, limit: number): AppError {
  const amount = count === null ? `more than ${limit.toLocaleString('en-US')}` : count.toLocaleString('en-US');
  return new AppError(
    'UNSUPPORTED_FORMAT',
    `The AVIF file declares ${amount} ${what}; at most ${limit.toLocaleString('en-US')} are accepted (no camera or encoder makes such files).`,
    `avif: ${amount} ${what} > ${limit}`,
  );
}

/** An AVIF feature the decoder does not implement (the file may be valid). */
export function unsupportedAvif(feature: string): AppError {
  return new AppError('UNSUPPORTED_FORMAT', `The AVIF file uses a feature that is not supported: ${feature}.`, `avif: ${feature}`);
}
