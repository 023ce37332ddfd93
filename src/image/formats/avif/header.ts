import type { Orientation } from '../../exif';
import type { ColourDescription, ImageHeader } from '../../header';
import { parseAvifContainer, type AvifContainer } from './container';
import { itemRanges, type MetaIndex } from './meta';
import { findProperty, type PropertyLink } from './properties';
import { readSequenceHeaders } from './verify';

export interface AvifHeader extends ImageHeader {
  /** The container as the decoder and the lossless strip use it: parsed once, here. */
  container: AvifContainer;
}

/**
 * The header: the container parsed once, with libheif's limits (container.ts), and the AV1
 * sequence header of every image to decode, none of which may make frames larger than declared
 * (one that cannot fill its size is refused by the container checks, after the pixel limit). The
 * size is the primary item's (a grid's output size) cropped by its clean aperture; for an image
 * sequence without a primary item, the first frame's. Damage is AppError UNSUPPORTED_FORMAT.
 */
export function readAvifHeader(bytes: Uint8Array): AvifHeader {
  const container = parseAvifContainer(bytes);
  readSequenceHeaders(bytes, container);
  const { properties, meta, nclx } = container;
  const icc = iccProfile(bytes, properties);
  const colour: ColourDescription[] = [];
  if (icc) colour.push({ kind: 'icc', bytes: icc });
  if (nclx) colour.push({ kind: 'cicp', primaries: nclx.primaries, transfer: nclx.transfer });
  const first = container.color.tiles[0];
  return {
    format: 'avif',
    ...container.size,
    orientation: orientation(bytes, properties),
    colour,
    // Only an alpha auxiliary image (or track) gives transparency: without one the rows are opaque.
    alpha: container.alpha !== null,
    bitDepth: first.sequence?.bitDepth ?? first.config.bitDepth,
    exif: meta && exifItem(bytes, meta),
    xmp: meta && metadataItem(bytes, meta, (type, contentType) => type === 'mime' && contentType === 'application/rdf+xml'),
    container,
  };
}

/**
 * EXIF orientation equal to HEIF `irot` (angle x 90 degrees anticlockwise) followed by `imir`, by
 * [angle][mirror]: mirror 0 = none, 1 = imir axis 0, 2 = imir axis 1.
 *
 * `imir` axis follows ISO/IEC 23008-12:2022, which is what libavif's `avifImageMirror` documents: axis 0
 * exchanges top and bottom (EXIF 4), axis 1 exchanges left and right (EXIF 2). The 2017 edition spoke
 * of a vertical (0) / horizontal (1) mirror *axis*, which reads as the opposite flips; not followed.
 *
 * Order: rotation first, then mirror, as MIAF (ISO/IEC 23000-22) 7.3.6.7 requires (clap, irot, imir).
 * libavif does not record the `ipma` order: it only reports that irot/imir are present, and its own
 * EXIF-to-irot/imir mapping assumes irot before imir; so the `ipma` order is ignored here as well.
 * libavif (and so the service's decoder) never applies either to the decoded pixels, so the
 * pipeline's orientation stage does, as for a JPEG.
 */
const IROT_IMIR_TO_EXIF: readonly (readonly Orientation[])[] = [
  [1, 4, 2], // no rotation
  [8, 5, 7], // 90 anticlockwise
  [3, 2, 4], // 180
  [6, 7, 5], // 270 anticlockwise (90 clockwise)
];

/** The shown image's irot/imir as an EXIF orientation; an empty property counts as absent. */
function orientation(bytes: Uint8Array, properties: readonly PropertyLink[]): Orientation {
  const irot = findProperty(properties, 'irot');
  const imir = findProperty(properties, 'imir');
  const angle = irot && irot.end > irot.body ? bytes[irot.body] & 3 : 0;
  const mirror = imir && imir.end > imir.body ? 1 + (bytes[imir.body] & 1) : 0;
  return IROT_IMIR_TO_EXIF[angle][mirror];
}

/** The first `colr` of type `prof` or `rICC` of the shown image: the ICC profile, which rules over nclx (HEIF). */
function iccProfile(bytes: Uint8Array, properties: readonly PropertyLink[]): Uint8Array | null {
  for (const { box } of properties) {
    if (box.type !== 'colr' || box.end - box.body < 4) continue;
    const kind = String.fromCharCode(...bytes.subarray(box.body, box.body + 4));
    if (kind === 'prof' || kind === 'rICC') return bytes.subarray(box.body + 4, box.end);
  }
  return null;
}

/** The data of the first item `matches` accepts, when it lies in one piece; null otherwise. */
function metadataItem(bytes: Uint8Array, meta: MetaIndex, matches: (type: string, contentType: string | undefined) => boolean): Uint8Array | null {
  for (const item of meta.items.values()) {
    if (!matches(item.type, item.contentType)) continue;
    try {
      const ranges = itemRanges(bytes, meta, item);
      return ranges.length === 1 ? bytes.subarray(ranges[0].start, ranges[0].end) : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** An `Exif` item: a 4-byte offset to the TIFF header, then the EXIF data (HEIF A.2.1). */
function exifItem(bytes: Uint8Array, meta: MetaIndex): Uint8Array | null {
  const data = metadataItem(bytes, meta, (type) => type === 'Exif');
  if (!data || data.length < 4) return null;
  const offset = ((data[0] << 24) >>> 0) + ((data[1] << 16) | (data[2] << 8) | data[3]);
  return offset + 4 <= data.length ? data.subarray(offset + 4) : null;
}
