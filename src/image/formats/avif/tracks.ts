import { AppError } from '../../../errors';
import { damaged } from '../../bytes';
import type { Dimensions } from '../../types';
import { childBoxes, FieldReader, singleChild, type IsoBox } from './boxes';
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

/**
 * The first sample: at the offset (stco/co64) of the first chunk that stsc gives samples (chunk 1
 * unless a run gives it none, which the strip's chunk table reads the same way), its size from stsz.
 */
function firstSample(bytes: Uint8Array, tables: IsoBox[]): { start: number; end: number } {
  const stco = singleChild(tables, 'stco');
  const co64 = singleChild(tables, 'co64');
  const stsz = singleChild(tables, 'stsz');
  if (!(stco ?? co64) || !stsz) throw damaged('avif: track without chunk offsets or sample sizes');
  const offsets = FieldReader.of(bytes, (stco ?? co64)!, 4);
  const chunkCount = offsets.u32();
  if (chunkCount === 0) throw damaged('avif: track without chunks');
  const chunk = firstFilledChunk(bytes, singleChild(tables, 'stsc'));
  if (chunk > chunkCount) throw damaged(`avif: stsc gives samples from chunk ${chunk} of ${chunkCount}`);
  const width = stco ? 4 : 8;
  if ((chunk - 1) * width > offsets.remaining) throw damaged('avif: chunk count');
  offsets.at += (chunk - 1) * width;
  const start = offsets.uint(width);
  const sizes = FieldReader.of(bytes, stsz, 4);
  const fixedSize = sizes.u32();
  if (sizes.u32() === 0) throw damaged('avif: track without samples');
  const length = fixedSize !== 0 ? fixedSize : sizes.u32();
  if (length === 0 || start + length > bytes.length) throw damaged(`avif: first sample ${start}+${length} outside the file`);
  return { start, end: start + length };
}

/** The first chunk (from 1) of the first stsc run with samples; 1 without stsc. */
function firstFilledChunk(bytes: Uint8Array, stsc: IsoBox | null): number {
  if (!stsc) return 1;
  const runs = FieldReader.of(bytes, stsc, 4);
  const count = runs.u32();
  if (count * 12 > runs.remaining) throw damaged('avif: stsc entry count');
  for (let run = 0; run < count; run++) {
    const [firstChunk, perChunk] = [runs.u32(), runs.u32()];
    runs.u32(); // sample_description_index
    if (firstChunk === 0) throw damaged('avif: stsc names chunk 0');
    if (perChunk > 0) return firstChunk;
  }
  throw damaged('avif: stsc gives no chunk a sample');
}

/** One chunk of samples of a track: where its offset field is (stco or co64) and the bytes it holds. */
export interface SampleChunk {
  /** Offset of the chunk's offset field in the file, and its width. */
  at: number;
  size: 4 | 8;
  offset: number;
  /** Bytes of its samples (stsc and stsz); 0 for an empty chunk. */
  length: number;
}

/**
 * Every chunk of every track (trak/mdia/minf/stbl: stco or co64, with stsc and stsz for the chunk
 * lengths), which the lossless strip moves with the media data. The decoder reads only a first
 * sample, so tables it cannot follow are returned as the error, for the strip to refuse.
 */
export function readSampleChunks(bytes: Uint8Array, moov: IsoBox): SampleChunk[] | AppError {
  const chunks: SampleChunk[] = [];
  try {
    for (const trak of childBoxes(bytes, moov)) {
      if (trak.type !== 'trak') continue;
      let stbl: IsoBox | null = trak;
      for (const type of ['mdia', 'minf', 'stbl']) stbl = stbl && singleChild(childBoxes(bytes, stbl), type);
      if (stbl) trackChunks(bytes, childBoxes(bytes, stbl), chunks);
    }
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  return chunks;
}

function trackChunks(bytes: Uint8Array, tables: IsoBox[], chunks: SampleChunk[]): void {
  const stco = singleChild(tables, 'stco');
  const co64 = singleChild(tables, 'co64');
  if (stco && co64) throw damaged('avif: both stco and co64');
  const offsets = stco ?? co64;
  if (!offsets) return;
  const width = stco ? 4 : 8;
  const o = FieldReader.of(bytes, offsets, 4);
  const chunkCount = o.u32();
  if (chunkCount === 0) return;
  if (chunkCount * width > o.remaining) throw damaged('avif: chunk count');
  if (chunks.length + chunkCount > AVIF_LIMITS.sampleChunks) throw tooMany('chunks of samples', chunks.length + chunkCount, AVIF_LIMITS.sampleChunks);
  if (singleChild(tables, 'stz2')) throw damaged('avif: stz2 sample sizes');
  const stsc = singleChild(tables, 'stsc');
  const stsz = singleChild(tables, 'stsz');
  if (!stsc || !stsz) throw damaged('avif: chunks without stsc/stsz');

  // stsc: runs of (first_chunk, samples_per_chunk, sample_description_index), first_chunk rising from 1.
  const c = FieldReader.of(bytes, stsc, 4);
  const runs = c.u32();
  if (runs === 0 || runs * 12 > c.remaining) throw damaged('avif: stsc entry count');
  const runAt = c.at;
  const firstChunk = (run: number) => new FieldReader(bytes, runAt + run * 12, stsc.end, 'stsc').u32();
  const perChunkOf = (run: number) => new FieldReader(bytes, runAt + run * 12 + 4, stsc.end, 'stsc').u32();
  if (firstChunk(0) !== 1) throw damaged('avif: stsc does not start at chunk 1');
  for (let run = 1; run < runs; run++) if (firstChunk(run) <= firstChunk(run - 1)) throw damaged('avif: stsc order');

  const z = FieldReader.of(bytes, stsz, 4);
  const constantSize = z.u32();
  const sampleCount = z.u32();
  if (constantSize === 0 && sampleCount * 4 > z.remaining) throw damaged('avif: stsz entry count');

  let sample = 0;
  let run = 0;
  for (let chunk = 1; chunk <= chunkCount; chunk++) {
    while (run + 1 < runs && firstChunk(run + 1) <= chunk) run++;
    const perChunk = perChunkOf(run);
    if (perChunk > sampleCount - sample) throw damaged('avif: stsc names more samples than stsz');
    let length = constantSize * perChunk;
    if (constantSize === 0) for (let s = 0; s < perChunk; s++) length += z.u32();
    sample += perChunk;
    const at = o.at;
    chunks.push({ at, size: width, offset: o.uint(width), length });
  }
}
