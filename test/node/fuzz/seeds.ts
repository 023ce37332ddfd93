/// <reference types="node" />
/**
 * Seed files for the fuzz suite: small corpus files read straight from ../shared/corpus (never
 * copied into the project) plus a few synthetic files built here for structures the corpus lacks
 * (animated WebP, AVIF with metadata items / idat / iref, AVIF sequence, small JPEG/PNG/WebP with
 * every kind of metadata and a non-1 orientation). Pure TypeScript: nothing here may import the
 * WASM codecs (src/image/formats/, codecs/**, pipeline.ts, test/support/image-testing.ts).
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { concat } from '../../../src/image/bytes';
import { MAX_INFLATED_PROFILE } from '../../../src/image/stages/colour/inflate-profile';
import { readIccProfile } from '../../support/formats';
import { orientationOnlyExif } from '../../../src/image/exif';
import { isoBoxes } from '../../../src/image/formats/avif/boxes';
import { pngChunk, pngChunks } from '../../../src/image/formats/png/header';
import { webpChunk, webpChunks } from '../../../src/image/formats/webp/riff';
import { box, fullBox, text, u16, u32 } from '../../support/byte-builders';
import type { ImageFormat } from '../../../src/image/types';
import {
  curveTag, greyProfile, iccProfile, legacyLab16, lut16Tag, lutAToBTag, PROPHOTO, rgbProfile, SRGB, SRGB_TRC, xyzTag,
} from '../../support/icc-writer';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS_ROOT = path.resolve(PROJECT_ROOT, '../shared/corpus');
const FIXTURES_ROOT = path.resolve(PROJECT_ROOT, 'test/fixtures');

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

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];

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

/**
 * Small AVIFs that decode quickly, for the decoder target: the decoder fixtures (192x128 grids at 8,
 * 10 and 12 bits, alpha, premultiplied, clap, monochrome, identity), the alpha fixtures and the
 * sequence, each twice, and the corpus's odd-sized fox (1203x799) once.
 */
export const avifDecoderSeeds = once(() => {
  const fixtures = ['avif', 'alpha', 'animated'].flatMap((folder) =>
    readdirSync(path.join(FIXTURES_ROOT, folder))
      .filter((name) => name.endsWith('.avif'))
      .sort()
      .map((name) => ({ name: `fixtures/${folder}/${name}`, bytes: new Uint8Array(readFileSync(path.join(FIXTURES_ROOT, folder, name))) })),
  );
  return [...fixtures, ...fixtures, corpusFile('avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif')];
});

export const allSeeds = once(() => [...jpegSeeds(), ...pngSeeds(), ...webpSeeds(), ...avifSeeds()]);

// ---------------------------------------------------------------------------------------------
// Colour: containers with ICC profiles, the profiles themselves, CMYK JPEGs

/** Fixture files (test/fixtures/<folder>) ending in `ext`, sorted by name. */
function fixtureFolder(folder: string, ext: string): Seed[] {
  const seeds = readdirSync(path.join(FIXTURES_ROOT, folder))
    .filter((name) => name.endsWith(ext))
    .sort()
    .map((name) => ({ name: `fixtures/${folder}/${name}`, bytes: new Uint8Array(readFileSync(path.join(FIXTURES_ROOT, folder, name))) }));
  if (seeds.length === 0) throw new Error(`fuzz seeds: no ${ext} files in test/fixtures/${folder}`);
  return seeds;
}

const smallCmykIcc = once((): Seed => {
  const name = 'fixtures/cmyk/small-cmyk.icc';
  return { name, bytes: new Uint8Array(readFileSync(path.join(FIXTURES_ROOT, 'cmyk/small-cmyk.icc'))) };
});

/** 96x64 CMYK / YCCK JPEGs (baseline, progressive, 4:2:0, with and without a 25 KB profile) and a grey one. */
export const cmykJpegSeeds = once(() => [...fixtureFolder('cmyk', '.jpg'), jpegSplitProfile()]);

/** cmyk-noprofile.jpg with small-cmyk.icc split over three APP2 segments, stored out of order (2, 1, 3). */
function jpegSplitProfile(): Seed {
  const base = fixtureFolder('cmyk', 'cmyk-noprofile.jpg')[0].bytes;
  const profile = smallCmykIcc().bytes;
  const third = Math.ceil(profile.length / 3);
  const app2 = (sequence: number) => {
    const slice = profile.subarray((sequence - 1) * third, sequence * third);
    const length = 2 + 14 + slice.length;
    return concat([new Uint8Array([0xff, 0xe2, length >> 8, length & 0xff, ...text('ICC_PROFILE\0'), sequence, 3]), slice]);
  };
  return { name: 'synthetic/cmyk-split-profile.jpg', bytes: concat([base.subarray(0, 2), app2(2), app2(1), app2(3), base.subarray(2)]) };
}

/** basn2c08.png with an iCCP chunk holding `profile` (zlib) right after IHDR. */
function pngWithIccp(name: string, profile: Uint8Array): Seed {
  const base = corpusFile('png/pngsuite/basn2c08.png').bytes;
  const ihdr = [...pngChunks(base)][0];
  const data = concat([new Uint8Array([...text('ICC profile'), 0, 0]), new Uint8Array(deflateSync(profile))]);
  return { name, bytes: concat([base.subarray(0, ihdr.end), pngChunk('iCCP', data), base.subarray(ihdr.end)]) };
}

/** basn2c08.png with an iCCP of `size` zeros. */
export function iccpBomb(size: number): Seed {
  return pngWithIccp(`synthetic/iccp-${size}-zeros.png`, new Uint8Array(size));
}

/** Weights seeds with a profile against a format's general seeds: each profile seed `times` times. */
const weighted = (times: number, seeds: Seed[], rest: Seed[]) => [...Array.from({ length: times }, () => seeds).flat(), ...rest];

/** Per format: files with an embedded ICC profile (weighted so about half the mutations start from one), then the format's seeds. */
export const iccContainerSeeds: Record<ImageFormat, () => Seed[]> = {
  jpeg: once(() =>
    weighted(
      2,
      [
        corpusFile('photos/photo-1mp.jpg'),
        corpusFile('jpeg/orientation/landscape_2.jpg'),
        ...fixtureFolder('colour', '.jpg'),
        ...cmykJpegSeeds(),
      ],
      jpegSeeds(),
    ),
  ),
  png: once(() => [
    ...weighted(30, [...fixtureFolder('colour', '.png'), pngWithIccp('synthetic/basn2c08-cmyk-profile.png', smallCmykIcc().bytes)], pngSeeds()),
    // A zlib bomb (4 MB + 1 zeros in 4 KB, refused), once: every inflate of it takes ~40 ms. The
    // bombs at and over the cap are also in regressions/ (png-iccp-zlib-bomb-*.bin).
    iccpBomb(MAX_INFLATED_PROFILE + 1),
  ]),
  webp: once(() => weighted(6, fixtureFolder('colour', '.webp'), webpSeeds())),
  avif: once(() => weighted(4, fixtureFolder('colour', '.avif'), avifSeeds())),
};

/** Files with H.273 colour code points: AVIF `nclx` and PNG `cICP` (test/fixtures/cicp). */
export const cicpContainerSeeds: Record<'png' | 'avif', () => Seed[]> = {
  png: once(() => weighted(30, fixtureFolder('cicp', '.png'), pngSeeds())),
  avif: once(() => weighted(4, fixtureFolder('cicp', '.avif'), avifSeeds())),
};

/** Synthetic profiles for the LUT paths the corpus lacks (built with test/support/icc-writer). */
function syntheticProfiles(): Seed[] {
  const ramp = (n: number, f: (i: number) => number[]) => Array.from({ length: n }, (_, i) => f(i)).flat();
  const grid3 = (inputs: number) => 3 ** inputs;
  const identity3 = ['identity', 'identity', 'identity'] as const;
  return [
    { name: 'synthetic/prophoto-table-trc-v2.icc', bytes: rgbProfile(PROPHOTO, { table: [0, 1000, 9000, 30000, 65535] }, 2) },
    { name: 'synthetic/srgb-para.icc', bytes: rgbProfile(SRGB, SRGB_TRC) },
    { name: 'synthetic/grey-lab-gamma22.icc', bytes: greyProfile({ gamma: 2.2 }, 'Lab ') },
    {
      name: 'synthetic/rgb-mAB-clut.icc',
      bytes: iccProfile({
        colorSpace: 'RGB ',
        tags: [['A2B0', lutAToBTag({
          inputs: 3, b: [...identity3], matrix: [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], m: [{ gamma: 1.8 }, 'identity', { table: [0, 40000, 65535] }],
          clut: { points: [3, 3, 3], precision: 2, values: ramp(grid3(3) * 3, (i) => [(i * 2477) % 65536]) }, a: [SRGB_TRC, { gamma: 2.2 }, 'identity'],
        })], ['rTRC', curveTag(SRGB_TRC)]],
      }),
    },
    {
      name: 'synthetic/grey-mft2.icc',
      bytes: iccProfile({ colorSpace: 'GRAY', pcs: 'Lab ', version: 2, tags: [['A2B0', lut16Tag(1, 5, ramp(5, (i) => legacyLab16([25 * i, 0, 0])))], ['kTRC', curveTag({ gamma: 1 })]] }),
    },
    {
      name: 'synthetic/cmyk-mAB-xyz.icc',
      bytes: iccProfile({
        colorSpace: 'CMYK',
        tags: [['wtpt', xyzTag([0.9642, 1, 0.8249])], ['A2B1', lutAToBTag({
          inputs: 4, b: [...identity3], clut: { points: [3, 3, 3, 3], precision: 1, values: ramp(grid3(4) * 3, (i) => [(i * 97) & 0xff]) },
          a: [{ gamma: 1 }, { parametric: [2.2, 1, 0] }, 'identity', { table: [0, 65535] }],
        })]],
      }),
    },
    {
      name: 'synthetic/cmyk-mft2-lab.icc',
      bytes: iccProfile({ colorSpace: 'CMYK', pcs: 'Lab ', version: 2, tags: [['A2B0', lut16Tag(4, 2, ramp(16, (i) => legacyLab16([100 - 6 * i, i - 8, 8 - i])))]] }),
    },
  ];
}

/**
 * ICC profiles: the ones embedded in the colour seed files (read with `readIccProfile`, duplicates
 * dropped), small-cmyk.icc, and synthetic ones for the LUT types.
 */
export const iccProfileSeeds = once(async (): Promise<Seed[]> => {
  const containers: [ImageFormat, Seed][] = [
    ['jpeg', corpusFile('photos/photo-1mp.jpg')],
    ['jpeg', corpusFile('jpeg/orientation/landscape_2.jpg')],
    ...fixtureFolder('colour', '').filter((s) => /\.(jpg|png|webp|avif)$/.test(s.name)).map((s): [ImageFormat, Seed] => [s.name.endsWith('.jpg') ? 'jpeg' : (s.name.split('.').pop() as ImageFormat), s]),
    ...fixtureFolder('cmyk', '.jpg').map((s): [ImageFormat, Seed] => ['jpeg', s]),
  ];
  const seeds: Seed[] = [];
  const seen = new Set<string>();
  const add = (seed: Seed) => {
    const key = Buffer.from(seed.bytes).toString('base64');
    if (!seen.has(key)) seeds.push(seed);
    seen.add(key);
  };
  for (const [format, seed] of containers) {
    const profile = await readIccProfile(format, seed.bytes);
    if (profile) add({ name: `${seed.name} profile`, bytes: profile.slice() });
  }
  add(smallCmykIcc());
  for (const seed of syntheticProfiles()) add(seed);
  if (seeds.length < 10) throw new Error(`fuzz seeds: only ${seeds.length} ICC profiles`);
  return seeds;
});
