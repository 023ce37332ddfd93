/// <reference types="node" />
/**
 * The full-size inputs the memory and speed checks run on: the corpus photos (12 and 24 MP JPEG,
 * 12 MP WebP and AVIF) and what sharp makes from them where the corpus has no such file (a
 * progressive and an EXIF-rotated 12 MP JPEG, progressive JPEGs at 24 and 48 MP, PNG, WebP and AVIF
 * at 24 MP, a 48 MP JPEG made of four 12 MP photos, a 48 MP WebP of the 24 MP photo upscaled). Made once and cached in
 * test-output/inputs/ (not committed); test/workers reach them through the LARGE service binding, `npm run bench` reads them directly.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { withOrientation } from './exif-orientation.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PHOTOS = path.resolve(ROOT, '../shared/corpus/photos');
const CACHE = path.join(ROOT, 'test-output', 'inputs');

const photo = (name: string) => readFile(path.join(PHOTOS, name));

/** Name -> how to make it. Names say format, size and kind. */
const MAKERS: Record<string, () => Promise<Uint8Array>> = {
  'jpeg-12mp.jpg': () => photo('photo-12mp.jpg'),
  'jpeg-12mp-progressive.jpg': async () => sharp(await photo('photo-12mp.jpg')).keepMetadata().jpeg({ quality: 90, progressive: true }).toBuffer(),
  // A portrait phone photo: stored landscape, EXIF Orientation 6 (rotate 90 degrees clockwise to view).
  'jpeg-12mp-rotated.jpg': async () => withOrientation(await photo('photo-12mp.jpg'), 6),
  'jpeg-24mp.jpg': () => photo('photo-24mp.jpg'),
  // The same photo as a portrait camera shot (EXIF Orientation 6).
  'jpeg-24mp-rotated.jpg': async () => withOrientation(await photo('photo-24mp.jpg'), 6),
  // Progressive (as web-optimised photos are): libjpeg holds every coefficient, 72 MB unpacked at 24 MP.
  'jpeg-24mp-progressive.jpg': async () => sharp(await photo('photo-24mp.jpg')).jpeg({ quality: 90, progressive: true }).toBuffer(),
  'jpeg-48mp-progressive.jpg': async () => (await mosaic48()).jpeg({ quality: 90, progressive: true }).toBuffer(),
  'jpeg-48mp.jpg': async () => (await mosaic48()).jpeg({ quality: 90 }).toBuffer(),
  // A portrait camera photo: stored 8000x6000, EXIF Orientation 8 (rotate 90 degrees counter-clockwise to view).
  'jpeg-48mp-rotated.jpg': async () => (await mosaic48()).withMetadata({ orientation: 8 }).jpeg({ quality: 90 }).toBuffer(),
  'webp-12mp.webp': () => photo('photo-12mp.webp'),
  'webp-24mp.webp': async () => sharp(await photo('photo-24mp.jpg')).webp({ quality: 90 }).toBuffer(),
  // The 24 MP photo upscaled to 8000x6000 (48 MP), as sharp's WebP at its default quality.
  'webp-48mp.webp': async () => sharp(await photo('photo-24mp.jpg')).resize(8000, 6000).webp().toBuffer(),
  // A 5K screen's size (5120x2880, 14.7 MP) as a lossless WebP: the 24 MP photo resized, effort 1.
  'webp-lossless-15mp.webp': async () => sharp(await photo('photo-24mp.jpg')).resize(5120, 2880).webp({ lossless: true, effort: 1 }).toBuffer(),
  'png-12mp.png': async () => sharp(await photo('photo-12mp.jpg')).png({ compressionLevel: 6 }).toBuffer(),
  // A 24 MP photo as PNG is 50-70 MB, over the Pro plan's 50 MB upload: softened to 41 MB so the
  // API accepts it (the pixels, not the file size, are what the pipeline's memory depends on).
  'png-24mp.png': async () => sharp(await photo('photo-24mp.jpg')).blur(2).png({ compressionLevel: 9 }).toBuffer(),
  // What the Pro plan's 50 MB allows at 24 MP, as sharp writes it (zlib level 6): the photo itself
  // makes 57 MiB, so it is softened just enough (Gaussian sigma 1.2) to make 48 MiB.
  'png-24mp-zlib6.png': async () => sharp(await photo('photo-24mp.jpg')).blur(1.2).png({ compressionLevel: 6 }).toBuffer(),
  'avif-12mp.avif': () => photo('photo-12mp.avif'),
  // sharp's (libheif's) defaults: one AV1 item, 8-bit 4:4:4.
  'avif-24mp.avif': async () => sharp(await photo('photo-24mp.jpg')).avif({ quality: 60, effort: 2 }).toBuffer(),
  // One AV1 item, 8-bit 4:2:0, as cameras and most encoders write (effort 0: made in seconds).
  'avif-24mp-420.avif': async () => sharp(await photo('photo-24mp.jpg')).avif({ quality: 50, effort: 0, chromaSubsampling: '4:2:0' }).toBuffer(),
  'avif-48mp-420.avif': async () => sharp(await largeInput('jpeg-48mp.jpg')).avif({ quality: 50, effort: 0, chromaSubsampling: '4:2:0' }).toBuffer(),
  // The 48 MP AVIF with an alpha item: the colour and alpha of the 24 MP photo upscaled, opaque in a
  // centred disc and transparent around it.
  'avif-48mp-alpha.avif': async () => {
    const disc = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8000" height="6000"><circle cx="4000" cy="3000" r="2400"/></svg>');
    const opaque = await sharp(await photo('photo-24mp.jpg')).resize(8000, 6000).toBuffer();
    return sharp(opaque).ensureAlpha(0).composite([{ input: disc, blend: 'dest-in' }]).avif({ quality: 50, effort: 0, chromaSubsampling: '4:2:0' }).toBuffer();
  },
};

export const LARGE_INPUTS = Object.keys(MAKERS);

const pending = new Map<string, Promise<Uint8Array>>();

/** The bytes of a named input, made and cached on first use. */
export function largeInput(name: string): Promise<Uint8Array> {
  const make = MAKERS[name];
  if (!make) return Promise.reject(new Error(`no large input ${name}; known: ${LARGE_INPUTS.join(', ')}`));
  let bytes = pending.get(name);
  if (!bytes) {
    bytes = (async () => {
      const file = path.join(CACHE, name);
      if (existsSync(file)) return new Uint8Array(await readFile(file));
      const made = await make();
      await mkdir(CACHE, { recursive: true });
      // Written under another name first, so a test file running at the same time never reads half a file.
      const partial = `${file}.${process.pid}.partial`;
      await writeFile(partial, made);
      await rename(partial, file);
      return new Uint8Array(made);
    })();
    pending.set(name, bytes);
  }
  return bytes;
}

/** For workerd tests: GET /<name> answers the bytes. */
export async function serveLargeInput(request: Request): Promise<Response> {
  const name = decodeURIComponent(new URL(request.url).pathname.slice(1));
  try {
    return new Response(await largeInput(name));
  } catch (error) {
    return new Response(String(error), { status: 404 });
  }
}

/** 8000x6000: the 12 MP photo four times, mirrored so the seams are not hard edges. */
async function mosaic48() {
  const quarter = await sharp(await photo('photo-12mp.jpg')).raw().toBuffer({ resolveWithObject: true });
  const { width, height } = quarter.info;
  const channels = quarter.info.channels as 3;
  const raw = { raw: { width, height, channels } } as const;
  const tile = (flop: boolean, flip: boolean) => sharp(quarter.data, raw).flop(flop).flip(flip).raw().toBuffer();
  const [a, b, c, d] = await Promise.all([tile(false, false), tile(true, false), tile(false, true), tile(true, true)]);
  return sharp({ create: { width: 2 * width, height: 2 * height, channels, background: '#000' } }).composite([
    { input: a, raw: raw.raw, left: 0, top: 0 },
    { input: b, raw: raw.raw, left: width, top: 0 },
    { input: c, raw: raw.raw, left: 0, top: height },
    { input: d, raw: raw.raw, left: width, top: height },
  ]);
}

