import { damaged } from '../../bytes';
import type { IsoBox } from './header';
import type { Dimensions } from '../../types';
import { childBoxes, FieldReader, singleChild } from './boxes';
import { AVIF_LIMITS, tooMany } from './limits';
import type { PropertyLink } from './properties';

/** The first frame of one `av01` track of an image sequence (avis). */
export interface TrackFrame {
  trackId: number;
  /** The av01 sample entry's width and height. */
  size: Dimensions;
  /** Boxes inside the sample entry (av1C, colr, pasp...), as properties. */
  properties: PropertyLink[];
  /** The first sample's bytes. */
  range: { start: number; end: number };
  /** tref: track ids this track is an auxiliary of ('auxl') or premultiplied by ('prem'). */
  auxiliaryFor: number[];
  premultipliedBy: number[];
}

/**
 * Every `av01` track of `moov` with its first sample (the service shows the first frame of a
 * sequence, as decisions.md says). Tracks of other codecs are skipped.
 */
export function readTracks(bytes: Uint8Array, moov: IsoBox): TrackFrame[] {
  const tracks: TrackFrame[] = [];
  for (const trak of childBoxes(bytes, moov)) {
    if (trak.type !== 'trak') continue;
    const track = readTrack(bytes, trak);
    if (track) tracks.push(track);
  }
  return tracks;
}

function readTrack(bytes: Uint8Array, trak: IsoBox): TrackFrame | null {
  const children = childBoxes(bytes, trak);
  const tkhd = singleChild(children, 'tkhd');
  if (!tkhd) throw damaged('avif: trak without tkhd');
  const header = FieldReader.of(bytes, tkhd);
  const version = header.u8();
  header.skip(3 + (version === 1 ? 16 : 8)); // flags, creation and modification times
  const trackId = header.u32();
  let stbl: IsoBox | null = trak;
  for (const type of ['mdia', 'minf', 'stbl']) stbl = stbl && singleChild(childBoxes(bytes, stbl), type);
  if (!stbl) return null;
  const tables = childBoxes(bytes, stbl);
  const stsd = singleChild(tables, 'stsd');
  if (!stsd) throw damaged('avif: stbl without stsd');
  const entryCount = FieldReader.of(bytes, stsd, 4).u32();
  if (entryCount > AVIF_LIMITS.sampleEntries) throw tooMany('sample descriptions', entryCount, AVIF_LIMITS.sampleEntries);
  const entry = childBoxes(bytes, stsd, 8, AVIF_LIMITS.sampleEntries)[0];
  if (entry?.type !== 'av01') return null;
  const fields = FieldReader.of(bytes, entry, 24); // SampleEntry and VisualSampleEntry fields before the size
  const size = { width: fields.u16(), height: fields.u16() };
  if (size.width === 0 || size.height === 0) throw damaged(`avif: track sample entry ${size.width}x${size.height}`);
  const entryBoxes = childBoxes(bytes, { type: 'av01', body: entry.body + 78, end: entry.end }); // after VisualSampleEntry's 78 bytes
  const references = readTrackReferences(bytes, singleChild(children, 'tref'));
  return {
    trackId,
    size,
    properties: entryBoxes.map((box) => ({ box, essential: false })),
    range: firstSample(bytes, tables),
    auxiliaryFor: references.get('auxl') ?? [],
    premultipliedBy: references.get('prem') ?? [],
  };
}

function readTrackReferences(bytes: Uint8Array, tref: IsoBox | null): Map<string, number[]> {
  const references = new Map<string, number[]>();
  for (const reference of tref ? childBoxes(bytes, tref) : []) {
    const r = FieldReader.of(bytes, reference);
    const ids: number[] = [];
    while (r.remaining >= 4 && ids.length < AVIF_LIMITS.references) ids.push(r.u32());
    references.set(reference.type, ids);
  }
  return references;
}

/** The first sample: at the first chunk offset (stco/co64), its size from stsz. */
function firstSample(bytes: Uint8Array, tables: IsoBox[]): { start: number; end: number } {
  const stco = singleChild(tables, 'stco');
  const co64 = singleChild(tables, 'co64');
  const stsz = singleChild(tables, 'stsz');
  if (!(stco ?? co64) || !stsz) throw damaged('avif: track without chunk offsets or sample sizes');
  const offsets = FieldReader.of(bytes, (stco ?? co64)!, 4);
  if (offsets.u32() === 0) throw damaged('avif: track without chunks');
  const start = stco ? offsets.u32() : offsets.uint(8);
  const sizes = FieldReader.of(bytes, stsz, 4);
  const fixedSize = sizes.u32();
  if (sizes.u32() === 0) throw damaged('avif: track without samples');
  const length = fixedSize !== 0 ? fixedSize : sizes.u32();
  if (length === 0 || start + length > bytes.length) throw damaged(`avif: first sample ${start}+${length} outside the file`);
  return { start, end: start + length };
}
