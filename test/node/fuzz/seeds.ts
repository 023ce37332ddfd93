/// <reference types="node" />
/**
 * Seed files for the fuzz suite: small corpus files read straight from ../shared/corpus (never
 * copied into the project) plus a few synthetic files built here for structures the corpus lacks
 * (animated WebP, AVIF with metadata items / idat / iref, AVIF sequence, small JPEG/PNG/WebP with
 * every kind of metadata and a non-1 orientation). Pure TypeScript: nothing here may import the
 * WASM codecs (src/image/formats.ts, codecs/**, pipeline.ts, test/support/image-testing.ts).
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { concat } from '../../../src/image/bytes';
import { orientationOnlyExif } from '../../../src/image/exif';
import { isoBoxes } from '../../../src/image/header/avif';
import { pngChunk, pngChunks } from '../../../src/image/header/png';
import { webpChunk, webpChunks } from '../../../src/image/header/webp';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS_ROOT = path.resolve(PROJECT_ROOT, '../shared/corpus');

export interface Seed {
  /** Corpus path, or `synthetic/<what>`. */
  name: string;
  bytes: Uint8Array;
}

function corpusFile(relative: string, maxBytes = Infinity): Seed {
  const file = path.join(CORPUS_ROOT, relative);
  if (maxBytes === Infinity) return { name: relative, bytes: new Uint8Array(readFileSync(file)) };
  const bytes = new Uint8Array(maxBytes);
  const fd = openSync(file, 'r');
  try {
    const n = readSync(fd, bytes, 0, maxBytes, 0);
    return { name: `${relative}[0..${n})`, bytes: bytes.subarray(0, n) };
  } finally {
    closeSync(fd);
  }
}

/** Every file of a corpus folder ending in `ext`, at most `maxBytes` long, sorted by name. */
function corpusFolder(folder: string, ext: string, maxBytes = 512 * 1024): Seed[] {
  const seeds = readdirSync(path.join(CORPUS_ROOT, folder))
    .filter((name) => name.endsWith(ext))
    .sort()
    .map((name) => corpusFile(`${folder}/${name}`))
    .filter((seed) => seed.bytes.length <= maxBytes);
  if (seeds.length === 0) throw new Error(`fuzz seeds: no ${ext} files in ${folder}`);
  return seeds;
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

// ---------------------------------------------------------------------------------------------
// Byte builders

const u16 = (v: number) => [(v >> 8) & 0xff, v & 0xff];
const u32 = (v: number) => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];
const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const box = (type: string, ...content: ArrayLike<number>[]) => {
  const body = content.flatMap((c) => Array.from(c));
  return [...u32(8 + body.length), ...text(type), ...body];
};
const fullBox = (type: string, version: number, flags: number, ...content: ArrayLike<number>[]) =>
  box(type, [version, (flags >> 16) & 0xff, (flags >> 8) & 0xff, flags & 0xff], ...content);

function riff(chunks: Uint8Array[]): Uint8Array {
  const body = concat(chunks);
  const n = body.length + 4;
  return concat([new Uint8Array([...text('RIFF'), n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24, ...text('WEBP')]), body]);
}

/** The image chunks (ALPH, VP8, VP8L) of a still WebP, as an ANMF's frame data. */
function frameData(still: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const c of webpChunks(still)) {
    if (c.type === 'ALPH' || c.type === 'VP8 ' || c.type === 'VP8L') parts.push(webpChunk(c.type, still.subarray(c.data, c.data + c.length)));
  }
  return concat(parts);
}

const VP8X_ANIMATION = 0x02;
const VP8X_ALPHA = 0x10;
const VP8X_ICC = 0x20;
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;
const vp8x = (flags: number, width: number, height: number) => webpChunk('VP8X', [flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);

function anmf(x: number, y: number, width: number, height: number, data: Uint8Array): Uint8Array {
  return webpChunk('ANMF', [...le24(x / 2), ...le24(y / 2), ...le24(width - 1), ...le24(height - 1), ...le24(100), 0, ...data]);
}

// ---------------------------------------------------------------------------------------------
// Synthetic seeds

/** Animated WebPs built from corpus stills: ALPH+VP8, VP8L and VP8 first frames, metadata chunks around. */
function animatedWebps(): Seed[] {
  const alpha = corpusFile('webp/lossy_alpha4.webp').bytes; // 100x100, VP8X + ALPH + VP8
  const lossless = corpusFile('webp/lossless_vec_1_0.webp').bytes; // 16x16 VP8L
  const lossy = corpusFile('webp/vp80-00-comprehensive-001.webp').bytes; // 176x144 VP8
  const anim = webpChunk('ANIM', [0xff, 0xff, 0xff, 0xff, 0, 0]);
  const exif = webpChunk('EXIF', orientationOnlyExif(6));
  return [
    {
      name: 'synthetic/animated-alph-vp8.webp',
      bytes: riff([vp8x(VP8X_ANIMATION | VP8X_ALPHA, 128, 120), anim, anmf(6, 12, 100, 100, frameData(alpha)), anmf(0, 0, 16, 16, frameData(lossless))]),
    },
    {
      name: 'synthetic/animated-vp8l.webp',
      bytes: riff([vp8x(VP8X_ANIMATION | VP8X_ALPHA, 40, 20), anim, anmf(2, 4, 16, 16, frameData(lossless)), anmf(0, 0, 16, 16, frameData(lossless))]),
    },
    {
      name: 'synthetic/animated-vp8-with-metadata.webp',
      bytes: riff([
        vp8x(VP8X_ANIMATION | VP8X_ICC | VP8X_EXIF | VP8X_XMP, 176, 144),
        webpChunk('ICCP', text('fake icc profile')),
        anim,
        anmf(0, 0, 176, 144, concat([webpChunk('UNKN', [1, 2, 3]), frameData(lossy)])),
        exif,
        webpChunk('XMP ', text('<x:xmpmeta/>')),
      ]),
    },
  ];
}

/** A still VP8X WebP with ICCP, EXIF (orientation 6), XMP and an unknown chunk around a VP8L bitstream. */
function webpWithMetadata(): Seed {
  const lossless = corpusFile('webp/lossless_vec_1_0.webp').bytes;
  return {
    name: 'synthetic/vp8x-metadata-orientation6.webp',
    bytes: riff([
      vp8x(VP8X_ICC | VP8X_EXIF | VP8X_XMP, 16, 16),
      webpChunk('ICCP', text('fake icc profile!')),
      frameData(lossless),
      webpChunk('EXIF', [...text('Exif\0\0'), ...orientationOnlyExif(6)]),
      webpChunk('XMP ', text('<x:xmpmeta/>')),
      webpChunk('INFO', [9]),
    ]),
  };
}

/** basn2c08.png with eXIf (orientation 8), tEXt, iCCP and tIME chunks after IHDR. */
function pngWithMetadata(): Seed {
  const base = corpusFile('png/pngsuite/basn2c08.png').bytes;
  const chunks = [...pngChunks(base)];
  const ihdr = chunks[0];
  return {
    name: 'synthetic/basn2c08-metadata-orientation8.png',
    bytes: concat([
      base.subarray(0, ihdr.end),
      pngChunk('eXIf', orientationOnlyExif(8)),
      pngChunk('tEXt', text('Comment\0secret')),
      pngChunk('iCCP', text('icc\0\0xxxx')),
      pngChunk('tIME', [7, 0xe8, 1, 2, 3, 4, 5]),
      base.subarray(ihdr.end),
    ]),
  };
}

/** A tiny JPEG (not decodable, structurally complete) with every kind of segment the walker and stripper handle. */
function jpegWithMetadata(): Seed {
  const seg = (marker: number, payload: number[]) => [0xff, marker, ...u16(payload.length + 2), ...payload];
  const littleExif = [...text('Exif\0\0II'), 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
  return {
    name: 'synthetic/all-segments-orientation3.jpg',
    bytes: new Uint8Array([
      0xff, 0xd8,
      ...seg(0xe0, text('JFIF\0\x01\x01\0\0\x01\0\x01\0\0')),
      ...seg(0xe1, littleExif),
      ...seg(0xe1, text('http://ns.adobe.com/xap/1.0/\0<x/>')),
      ...seg(0xe2, text('ICC_PROFILE\0\x01\x01....')),
      0xff, 0xff, ...seg(0xfe, text('a comment')),
      ...seg(0xee, text('Adobe\0\x64\0\0\0\0\x01')),
      ...seg(0xdb, [0, ...new Array(64).fill(1)]),
      ...seg(0xc0, [8, 0, 16, 0, 16, 1, 1, 0x11, 0]),
      ...seg(0xc4, [0, ...new Array(16).fill(0).map((_, i) => (i === 0 ? 1 : 0)), 0]),
      ...seg(0xdd, [0, 4]),
      ...seg(0xda, [1, 1, 0, 0, 0x3f, 0]),
      0x12, 0xff, 0x00, 0x34, 0xff, 0xd3, 0x56, 0xff, 0xff,
      0xff, 0xd9, 1, 2, 3, 0xff, 0xe1,
    ]),
  };
}

/**
 * The AV1 sequence header OBU (max frame 1204x800) at the start of a corpus AVIF's item data, so
 * synthetic AVIFs pass the header reader's check of the AV1 sizes against ispe / sample entries.
 */
const foxSequenceHeader = once((): number[] => {
  const fox = corpusFile('avif/fox.profile0.8bpc.yuv420.avif').bytes;
  const mdat = [...isoBoxes(fox, 0, fox.length)].find((b) => b.type === 'mdat')!;
  const at = mdat.body;
  if (fox[at] !== 0x0a || fox[at + 1] & 0x80) throw new Error('fuzz seeds: fox AVIF does not start with a sequence header OBU');
  return Array.from(fox.subarray(at, at + 2 + fox[at + 1]));
});

/**
 * A synthetic still AVIF (a real AV1 sequence header, then filler): three items (av01 in two reversed mdat extents, Exif in
 * mdat, XMP `mime` in idat), iref cdsc, ipco with ispe, av1C, ICC colr, nclx colr, pixi, irot, imir.
 */
function avifStill(layout: 'plain' | 'large-mdat'): Seed {
  const av1 = [...foxSequenceHeader(), ...text('AV1-FAKE-OBU-DATA-0123456789abcdefghij')];
  const exif = [...u32(0), ...text('MM'), 0, 42, ...u32(8), ...u16(1), ...u16(0x0112), ...u16(3), ...u32(1), ...u16(6), 0, 0, ...u32(0)];
  const xmp = text('<x:xmpmeta>secret</x:xmpmeta>');
  const half = 8; // the first extent (stored second in mdat) cuts the sequence header in two
  const ftyp = box('ftyp', text('avif'), u32(0), text('mif1avifmiaf'));
  const infe = (id: number, type: string, name: string, contentType?: string) =>
    fullBox('infe', 2, 0, u16(id), u16(0), text(type), text(name + '\0'), contentType ? text(contentType + '\0') : []);
  const meta = (dataStart: number) =>
    fullBox(
      'meta', 0, 0,
      fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]),
      fullBox('pitm', 0, 0, u16(1)),
      fullBox('iloc', 1, 0, [0x44, 0x00], u16(3),
        [...u16(1), ...u16(0), ...u16(0), ...u16(2), ...u32(dataStart + (av1.length - half)), ...u32(half), ...u32(dataStart), ...u32(av1.length - half)],
        [...u16(2), ...u16(0), ...u16(0), ...u16(1), ...u32(dataStart + av1.length), ...u32(exif.length)],
        [...u16(3), ...u16(1), ...u16(0), ...u16(1), ...u32(0), ...u32(xmp.length)]),
      fullBox('iinf', 0, 0, u16(3), infe(1, 'av01', 'Color'), infe(2, 'Exif', 'Exif'), infe(3, 'mime', 'XMP', 'application/rdf+xml')),
      fullBox('iref', 0, 0, box('cdsc', u16(2), u16(1), u16(1)), box('cdsc', u16(3), u16(1), u16(1))),
      box('iprp',
        box('ipco',
          fullBox('ispe', 0, 0, u32(1204), u32(800)),
          box('av1C', [0x81, 0x00, 0x0c, 0x00]),
          box('colr', text('prof'), text('fake icc profile')),
          box('colr', text('nclx'), [0, 1, 0, 13, 0, 6, 0x80]),
          fullBox('pixi', 0, 0, [3, 8, 8, 8]),
          box('irot', [1]),
          box('imir', [0])),
        fullBox('ipma', 0, 0, u32(2), [...u16(1), 7, 1, 0x82, 3, 4, 5, 0x86, 0x87], [...u16(2), 0])),
      box('idat', xmp),
    );
  const mdatBody = [...av1.slice(half), ...av1.slice(0, half), ...exif];
  const free = layout === 'large-mdat' ? box('free', [0, 0, 0, 0]) : [];
  const mdatHeaderLength = layout === 'large-mdat' ? 16 : 8;
  const dataStart = ftyp.length + free.length + meta(0).length + mdatHeaderLength;
  const mdat = layout === 'large-mdat' ? [...u32(1), ...text('mdat'), ...u32(0), ...u32(16 + mdatBody.length), ...mdatBody] : box('mdat', mdatBody);
  return { name: `synthetic/still-metadata-${layout}.avif`, bytes: new Uint8Array([...ftyp, ...free, ...meta(dataStart), ...mdat]) };
}

/** A synthetic AVIF sequence (moov only, no meta): one track, 3 samples in 2 chunks (stsc runs), stco. */
function avifSequence(): Seed {
  const samples = [text('SAMPLE-ONE'), text('SAMPLE-TWO!'), text('SAMPLE-3')].map((filler) => [...foxSequenceHeader(), ...filler]);
  const ftyp = box('ftyp', text('avis'), u32(0), text('avifavismsf1iso8mif1miaf'));
  const entry = box('av01', new Array(6).fill(0), u16(1), new Array(16).fill(0), u16(1204), u16(800), u32(0x480000), u32(0x480000), u32(0), u16(1), new Array(32).fill(0), u16(24), u16(0xffff), box('av1C', [0x81, 0, 0x0c, 0]));
  const moov = (offsets: number[]) =>
    box('moov',
      fullBox('mvhd', 0, 0, new Array(96).fill(0)),
      box('trak',
        fullBox('tkhd', 0, 1, new Array(80).fill(0)),
        box('mdia',
          fullBox('mdhd', 0, 0, new Array(20).fill(0)),
          fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]),
          box('minf',
            box('stbl',
              fullBox('stsd', 0, 0, u32(1), entry),
              fullBox('stts', 0, 0, u32(1), u32(3), u32(1)),
              fullBox('stsc', 0, 0, u32(2), u32(1), u32(2), u32(1), u32(2), u32(1), u32(1)),
              fullBox('stsz', 0, 0, u32(0), u32(3), ...samples.map((s) => u32(s.length))),
              fullBox('stco', 0, 0, u32(offsets.length), ...offsets.map(u32)))))));
  const dataStart = ftyp.length + moov([0, 0]).length + 8;
  const first = samples[0].length + samples[1].length;
  return {
    name: 'synthetic/sequence.avif',
    bytes: new Uint8Array([...ftyp, ...moov([dataStart, dataStart + first]), ...box('mdat', samples.flat())]),
  };
}

/** basn2c08.png (32x32) as an APNG: acTL, the IDAT as default image and frame 0, then a 16x16 fdAT frame. */
function apng(): Seed {
  const base = corpusFile('png/pngsuite/basn2c08.png').bytes;
  const chunks = [...pngChunks(base)];
  const raw = (type: string) => chunks.filter((c) => c.type === type).map((c) => base.subarray(c.start, c.end));
  const idatData = concat(chunks.filter((c) => c.type === 'IDAT').map((c) => base.subarray(c.data, c.data + c.length)));
  const fcTL = (sequence: number, width: number, height: number, x: number, y: number) =>
    pngChunk('fcTL', [...u32(sequence), ...u32(width), ...u32(height), ...u32(x), ...u32(y), ...u16(1), ...u16(10), 0, 0]);
  return {
    name: 'synthetic/basn2c08-apng.png',
    bytes: concat([
      base.subarray(0, chunks[0].end),
      pngChunk('acTL', [...u32(2), ...u32(0)]),
      fcTL(0, 32, 32, 0, 0),
      ...raw('IDAT'),
      fcTL(1, 16, 16, 8, 8),
      pngChunk('fdAT', [...u32(2), ...idatData]),
      ...raw('IEND'),
    ]),
  };
}

// ---------------------------------------------------------------------------------------------
// Seed groups (each loaded once per test file)

export const jpegSeeds = once(() => [
  jpegWithMetadata(),
  ...corpusFolder('jpeg/camera', '.jpg'),
  ...corpusFolder('jpeg/orientation', '.jpg'),
  ...corpusFolder('jpeg/bad-exif', '.jpg', 256 * 1024), // not corrupted.jpg (1.9 MB)
]);

export const pngSeeds = once(() => [pngWithMetadata(), apng(), ...corpusFolder('png/pngsuite', '.png')]);

export const animatedWebpSeeds = once(() => animatedWebps());

export const webpSeeds = once(() => [webpWithMetadata(), ...animatedWebpSeeds(), ...corpusFolder('webp', '.webp')]);

export const avifSeeds = once(() => [
  avifStill('plain'),
  avifStill('large-mdat'),
  avifSequence(),
  ...corpusFolder('avif', '.avif'),
  // Box structure of a real 12 MP file (meta with an ICC colr, then an mdat cut short).
  corpusFile('photos/photo-12mp.avif', 64 * 1024),
]);

export const allSeeds = once(() => [...jpegSeeds(), ...pngSeeds(), ...webpSeeds(), ...avifSeeds()]);
