/**
 * Test-only helpers for the src/image tests (imported by *.test.ts only, never by the worker):
 * corpus access through the CORPUS binding, the corpus file lists, decoders, and fast-check
 * generators for damaged files.
 */
import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { expect } from 'vitest';
import { AppError, type ErrorCode } from '../../src/errors';
import { FORMATS } from '../../src/image/formats/index';

import { isCmyk, type DecodedImage, type ImageFormat, type RgbaImage } from '../../src/image/types';
import { collectFrame, frameSource } from './row-sources';
export { xorshift } from './xorshift';
import { encodeToBytes } from '../../src/image/result-buffer';

const cache = new Map<string, Promise<Uint8Array>>();

/** Bytes of a file of ../shared/corpus, e.g. corpus('png/pngsuite/basn2c08.png'). */
export function corpus(path: string): Promise<Uint8Array> {
  let bytes = cache.get(path);
  if (!bytes) {
    bytes = (async () => {
      const response = await env.CORPUS.fetch(`http://corpus/${path}`);
      if (!response.ok) throw new Error(`corpus: ${path}: ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    })();
    cache.set(path, bytes);
  }
  return bytes;
}

/** Bytes of a committed test fixture, e.g. fixture('colour/p3.jpg') (made by `npm run fixtures`). */
export async function fixture(path: string): Promise<Uint8Array> {
  const response = await env.FIXTURES.fetch(`http://fixtures/${path}`);
  if (!response.ok) throw new Error(`fixture: ${path}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The image files of a test/fixtures folder, as paths for `fixture()`. */
export async function fixtureList(folder: string): Promise<string[]> {
  const response = await env.FIXTURES.fetch(`http://fixtures/${folder}?list`);
  if (!response.ok) throw new Error(`fixtures: ${folder}: ${response.status}`);
  const names = (await response.json()) as string[];
  return names.filter((name) => /\.(jpg|png|webp|avif)$/.test(name)).map((name) => `${folder}/${name}`);
}

const PNGSUITE_NAMES = `basi0g01 basi0g02 basi0g04 basi0g08 basi0g16 basi2c08 basi2c16 basi3p01 basi3p02 basi3p04
basi3p08 basi4a08 basi4a16 basi6a08 basi6a16 basn0g01 basn0g02 basn0g04 basn0g08 basn0g16 basn2c08 basn2c16
basn3p01 basn3p02 basn3p04 basn3p08 basn4a08 basn4a16 basn6a08 basn6a16 bgai4a08 bgai4a16 bgan6a08 bgan6a16
bgbn4a08 bggn4a16 bgwn6a08 bgyn6a16 ccwn2c08 ccwn3p08 cdfn2c08 cdhn2c08 cdsn2c08 cdun2c08 ch1n3p04 ch2n3p08
cm0n0g04 cm7n0g04 cm9n0g04 cs3n2c16 cs3n3p08 cs5n2c08 cs5n3p08 cs8n2c08 cs8n3p08 ct0n0g04 ct1n0g04 cten0g04
ctfn0g04 ctgn0g04 cthn0g04 ctjn0g04 ctzn0g04 exif2c08 f00n0g08 f00n2c08 f01n0g08 f01n2c08 f02n0g08 f02n2c08
f03n0g08 f03n2c08 f04n0g08 f04n2c08 f99n0g04 g03n0g16 g03n2c08 g03n3p04 g04n0g16 g04n2c08 g04n3p04 g05n0g16
g05n2c08 g05n3p04 g07n0g16 g07n2c08 g07n3p04 g10n0g16 g10n2c08 g10n3p04 g25n0g16 g25n2c08 g25n3p04 oi1n0g16
oi1n2c16 oi2n0g16 oi2n2c16 oi4n0g16 oi4n2c16 oi9n0g16 oi9n2c16 pp0n2c16 pp0n6a08 ps1n0g08 ps1n2c16 ps2n0g08
ps2n2c16 s01i3p01 s01n3p01 s02i3p01 s02n3p01 s03i3p01 s03n3p01 s04i3p01 s04n3p01 s05i3p02 s05n3p02 s06i3p02
s06n3p02 s07i3p02 s07n3p02 s08i3p02 s08n3p02 s09i3p02 s09n3p02 s32i3p04 s32n3p04 s33i3p04 s33n3p04 s34i3p04
s34n3p04 s35i3p04 s35n3p04 s36i3p04 s36n3p04 s37i3p04 s37n3p04 s38i3p04 s38n3p04 s39i3p04 s39n3p04 s40i3p04
s40n3p04 tbbn0g04 tbbn2c16 tbbn3p08 tbgn2c16 tbgn3p08 tbrn2c08 tbwn0g16 tbwn3p08 tbyn3p08 tm3n3p02 tp0n0g08
tp0n2c08 tp0n3p08 tp1n3p08 xc1n0g08 xc9n2c08 xcrn0g04 xcsn0g01 xd0n2c08 xd3n2c08 xd9n2c08 xdtn0g01 xhdn0g08
xlfn0g04 xs1n0g01 xs2n0g01 xs4n0g01 xs7n0g01 z00n2c08 z03n2c08 z06n2c08 z09n2c08`.split(/\s+/);

/** PngSuite paths; names starting with `x` are the deliberately corrupt files. */
export const PNGSUITE = PNGSUITE_NAMES.map((name) => `png/pngsuite/${name}.png`);

/** Width and height of a valid PngSuite file, from its documented naming scheme. */
export function pngSuiteSize(path: string): { width: number; height: number } {
  const name = path.split('/').pop()!;
  const sized = /^s(\d\d)[in]/.exec(name);
  if (sized) return { width: Number(sized[1]), height: Number(sized[1]) };
  if (name.startsWith('cdf')) return { width: 8, height: 32 };
  if (name.startsWith('cdh')) return { width: 32, height: 8 };
  if (name.startsWith('cds')) return { width: 8, height: 8 };
  return { width: 32, height: 32 };
}

/** JPEG corpus files with their stored (not oriented) sizes. */
export const JPEGS: Record<string, [number, number]> = {
  'jpeg/bad-exif/corrupted.jpg': [3648, 2736],
  'jpeg/bad-exif/image00971.jpg': [636, 227],
  'jpeg/bad-exif/image01088.jpg': [425, 120],
  'jpeg/bad-exif/image01137.jpg': [88, 64],
  'jpeg/bad-exif/image01551.jpg': [61, 58],
  'jpeg/camera/BlueSquare.jpg': [360, 216],
  'jpeg/camera/Canon_40D.jpg': [100, 68],
  'jpeg/camera/DSCN0010.jpg': [640, 480],
  'jpeg/camera/DSCN0021.jpg': [640, 480],
  'jpeg/camera/Nikon_D70.jpg': [100, 66],
  'jpeg/camera/Pentax_K10D.jpg': [100, 72],
  'jpeg/camera/Sony_HDR-HC3.jpg': [100, 64],
  'jpeg/camera/long_description.jpg': [100, 73],
  ...Object.fromEntries(
    [1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => [
      [`jpeg/orientation/landscape_${n}.jpg`, n <= 4 ? [600, 450] : [450, 600]],
      [`jpeg/orientation/portrait_${n}.jpg`, n <= 4 ? [450, 600] : [600, 450]],
    ]),
  ),
  'photos/photo-1mp.jpg': [1200, 800],
  'photos/photo-12mp.jpg': [4000, 3000],
  'photos/photo-24mp.jpg': [6000, 4000],
  'avif/fox.jpg': [1204, 800],
};

export const WEBPS: Record<string, [number, number]> = {
  'webp/alpha_filter_1_method_1.webp': [128, 128],
  'webp/bad_palette_index.webp': [128, 128],
  'webp/bug3.webp': [95, 95],
  'webp/lossless1.webp': [1000, 307],
  'webp/lossless_color_transform.webp': [512, 512],
  'webp/lossless_vec_1_0.webp': [16, 16],
  'webp/lossy_alpha1.webp': [1000, 307],
  'webp/lossy_alpha4.webp': [100, 100],
  'webp/near_lossless_75.webp': [256, 256],
  'webp/one_color_no_palette.webp': [100, 100],
  'webp/small_13x1.webp': [13, 1],
  'webp/small_1x1.webp': [1, 1],
  'webp/small_1x13.webp': [1, 13],
  'webp/small_31x13.webp': [31, 13],
  'webp/test.webp': [128, 128],
  'webp/very_short.webp': [63, 66],
  'webp/vp80-00-comprehensive-001.webp': [176, 144],
  'webp/vp80-02-inter-1418.webp': [200, 200],
  'webp/vp80-05-sharpness-1428.webp': [352, 288],
  'photos/photo-12mp.webp': [4000, 3000],
};

export const AVIFS: Record<string, [number, number]> = {
  'avif/fox.profile0.10bpc.yuv420.avif': [1204, 800],
  'avif/fox.profile0.8bpc.yuv420.avif': [1204, 800],
  'avif/fox.profile0.8bpc.yuv420.monochrome.avif': [1204, 800],
  'avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif': [1203, 799],
  'avif/fox.profile1.8bpc.yuv444.avif': [1204, 800],
  'avif/fox.profile2.12bpc.yuv422.avif': [1204, 800],
  'photos/photo-12mp.avif': [4000, 3000],
};

/** Runs `fn` and returns the AppError it throws with `code`; fails the test on success or another error. */
export function expectAppError(fn: () => unknown, code: ErrorCode): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(code);
    return error as AppError;
  }
  throw new Error(`expected AppError ${code}, got a result`);
}

/** Calls `fn`; returns its result, or undefined if it threw AppError `code`. Any other throw fails. */
export function resultOrAppError<T>(fn: () => T, code: ErrorCode = 'UNSUPPORTED_FORMAT'): T | undefined {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AppError && error.code === code) return undefined;
    throw error;
  }
}

/**
 * The service's own decoder for `format`, read to the end into one frame: RGBA, or CMYK inks for a
 * 4-component JPEG (before any colour conversion).
 */
export async function decodeWith(format: ImageFormat, bytes: Uint8Array): Promise<DecodedImage> {
  const source = await FORMATS[format].read(bytes).decode({ shrink: 1, region: null });
  const model = source.model;
  const frame = await collectFrame(source);
  return model === 'cmyk' ? { colorModel: 'cmyk', ...frame } : frame;
}

/** The service's own decoder, for files that decode to RGBA. */
export async function decodeRgba(format: ImageFormat, bytes: Uint8Array): Promise<RgbaImage> {
  const decoded = await decodeWith(format, bytes);
  if (isCmyk(decoded)) throw new Error('decodeRgba: the file is CMYK');
  return decoded;
}

/** The service's own encoder for `format`, fed the frame as bands. */
export function encodeWith(format: ImageFormat, image: RgbaImage, quality = 90): Promise<Uint8Array> {
  const data = image.data instanceof Uint8Array ? image.data : new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  let alpha = false;
  for (let i = 3; i < data.length && !alpha; i += 4) alpha = data[i] !== 255;
  return encodeToBytes(FORMATS[format].encoder, frameSource({ ...image, data: data.slice() }, { alpha }), { quality, orientation: 1 });
}

export const decodeJpeg = (bytes: Uint8Array): Promise<RgbaImage> => decodeRgba('jpeg', bytes);
export const decodePng = (bytes: Uint8Array): Promise<RgbaImage> => decodeRgba('png', bytes);
export const decodeWebp = (bytes: Uint8Array): Promise<RgbaImage> => decodeRgba('webp', bytes);

/** Every prefix length up to `dense`, then `sparse` lengths spread over the rest of the file. */
export function prefixLengths(length: number, dense = 1024, sparse = 48): number[] {
  const lengths = new Set<number>();
  for (let n = 0; n <= Math.min(length, dense); n++) lengths.add(n);
  for (let i = 1; i <= sparse; i++) lengths.add(Math.floor((length * i) / (sparse + 1)));
  lengths.add(length - 1);
  return [...lengths].filter((n) => n >= 0 && n < length).sort((a, b) => a - b);
}

/**
 * Copies of `bytes` with one byte changed (mostly in the first `headerBytes`, where parsers look)
 * and then maybe cut short.
 */
export function mutated(bytes: Uint8Array, headerBytes = 512): fc.Arbitrary<Uint8Array> {
  const last = bytes.length - 1;
  return fc
    .record({
      at: fc.oneof(fc.nat({ max: Math.min(headerBytes, last) }), fc.nat({ max: last })),
      value: fc.integer({ min: 0, max: 255 }),
      cut: fc.oneof(fc.constant(bytes.length), fc.nat({ max: bytes.length })),
    })
    .map(({ at, value, cut }) => {
      const copy = bytes.slice(0, cut);
      if (at < copy.length) copy[at] = value;
      return copy;
    });
}

/** Opaque RGBA noise from a fixed linear congruential sequence: the worst case for codecs' sizes and work. */
export function opaqueNoise(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let seed = 1;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = (i & 3) === 3 ? 255 : seed >>> 24;
  }
  return { data, width, height };
}

/** Byte equality that stays fast on multi-megabyte arrays (deep `toEqual` does not). */
export function sameBytes(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A full-size input made from the corpus photos (test/support/large-inputs.ts), e.g. largeInput('jpeg-24mp.jpg'). */
export async function largeInput(name: string): Promise<Uint8Array> {
  const response = await env.LARGE.fetch(`http://large/${name}`);
  if (!response.ok) throw new Error(`large input ${name}: ${response.status} ${await response.text()}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** sharp's plain libjpeg-turbo decode (no colour management, no rotation; test/support/reference-decoder.ts). */
export async function referenceRawDecode(bytes: Uint8Array): Promise<{ data: Uint8Array; width: number; height: number; model: string }> {
  const response = await env.REFERENCE.fetch('http://reference/?raw', { method: 'POST', body: bytes });
  if (!response.ok) throw new Error(`reference decoder: ${response.status} ${await response.text()}`);
  const width = Number(response.headers.get('x-width'));
  const height = Number(response.headers.get('x-height'));
  return { data: new Uint8Array(await response.arrayBuffer()), width, height, model: String(response.headers.get('x-model')) };
}

/** The largest difference between two equally long sample arrays (Infinity if their lengths differ). */
export function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > max) max = d;
  }
  return max;
}

/** sharp's JPEG of RGBA pixels: its default `jpeg({ quality })` (libjpeg defaults, 4:2:0, optimised Huffman tables), or progressive. */
export async function referenceJpegEncode(image: RgbaImage, quality: number, progressive = false): Promise<Uint8Array> {
  const query = `jpeg&width=${image.width}&height=${image.height}&quality=${quality}${progressive ? '&progressive' : ''}`;
  const response = await env.REFERENCE.fetch(`http://reference/?${query}`, { method: 'POST', body: image.data });
  if (!response.ok) throw new Error(`reference encoder: ${response.status} ${await response.text()}`);
  return new Uint8Array(await response.arrayBuffer());
}
