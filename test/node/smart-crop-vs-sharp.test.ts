/// <reference types="node" />
/**
 * position=entropy and position=attention against sharp's (libvips smartcrop) on every photo of
 * the corpus: the region we keep overlaps the one sharp keeps by at least 80%. Where our crop lies
 * in the picture is found from the result itself: the offset at which it best matches sharp's
 * resized, uncut picture (fit=outside, the same size cover cuts from).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp, { type OutputInfo, type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';

import type { Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const LIMITS = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 2 ** 33 };
const MIN_OVERLAP = 0.8;

const inFolder = (folder: string, pattern: RegExp) =>
  readdirSync(path.join(CORPUS, folder))
    .filter((name) => pattern.test(name))
    .map((name) => `${folder}/${name}`);
const PHOTOS = [
  ...inFolder('photos', /\.(jpg|webp|avif)$/),
  ...inFolder('jpeg/orientation', /\.jpg$/),
  ...inFolder('jpeg/camera', /\.jpg$/),
  'avif/fox.jpg',
  'avif/fox.profile0.8bpc.yuv420.avif',
];
/*
 * Boxes that make every photo smaller (a square, and a wide card that cuts top and bottom): when
 * enlarging, libvips samples half a pixel off centre (resize.ts), which is not what is compared
 * here. Known limit: on the 100x73 long_description.jpg a 90x22 strip keeps y=24 where sharp keeps
 * y=32 (64% overlap); our entropy crop on sharp's resized pixels keeps y=32, so the two decoders'
 * pixels decide a near tie between two 6-row strips.
 */
const boxesFor = ({ width, height }: { width: number; height: number }) => [
  { width: Math.min(400, Math.round(0.6 * Math.min(width, height))), height: Math.min(400, Math.round(0.6 * Math.min(width, height))) },
  { width: Math.min(480, Math.round(0.9 * width)), height: Math.min(270, Math.round(0.5 * height)) },
];

/** The 12 MP WebP and AVIF are decoded whole (no DCT scaling); at a quarter of the size the test stays fast. */
const REDUCED = new Set(['photos/photo-12mp.webp', 'photos/photo-12mp.avif']);
const inputs = new Map<string, Promise<Buffer>>();
function inputOf(file: string): Promise<Buffer> {
  let input = inputs.get(file);
  if (!input) {
    const bytes = readFileSync(path.join(CORPUS, file));
    const reduced = sharp(bytes).resize(1000);
    input = !REDUCED.has(file) ? Promise.resolve(bytes) : file.endsWith('.avif') ? reduced.avif({ quality: 80 }).toBuffer() : reduced.webp({ quality: 90 }).toBuffer();
    inputs.set(file, input);
  }
  return input;
}

/** sharp's resized, uncut picture, shared by both strategies. */
const uncut = new Map<string, Promise<Pixels>>();
function resizedBySharp(file: string, input: Buffer, box: { width: number; height: number }): Promise<Pixels> {
  const key = `${file} ${box.width}x${box.height}`;
  let pixels = uncut.get(key);
  if (!pixels) {
    pixels = raw(sharp(input).rotate().resize(box.width, box.height, { fit: 'outside' }));
    uncut.set(key, pixels);
  }
  return pixels;
}

interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
}

async function raw(image: Sharp): Promise<Pixels & { info: OutputInfo }> {
  const { data, info } = await image.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, info };
}

/** The offset in `picture` where `crop` matches best (sum of absolute differences over a grid of its pixels). */
function locate(crop: Pixels, picture: Pixels): { x: number; y: number } {
  let best = { x: 0, y: 0, sad: Infinity };
  const step = 3;
  for (let oy = 0; oy <= picture.height - crop.height; oy++) {
    for (let ox = 0; ox <= picture.width - crop.width; ox++) {
      let sad = 0;
      for (let y = 0; y < crop.height && sad < best.sad; y += step) {
        for (let x = 0; x < crop.width; x += step) {
          const a = (y * crop.width + x) * 3;
          const b = ((y + oy) * picture.width + x + ox) * 3;
          sad += Math.abs(crop.data[a] - picture.data[b]) + Math.abs(crop.data[a + 1] - picture.data[b + 1]) + Math.abs(crop.data[a + 2] - picture.data[b + 2]);
        }
      }
      if (sad < best.sad) best = { x: ox, y: oy, sad };
    }
  }
  return best;
}

const overlap = (a: { x: number; y: number }, b: { x: number; y: number }, box: { width: number; height: number }) =>
  (Math.max(0, box.width - Math.abs(a.x - b.x)) * Math.max(0, box.height - Math.abs(a.y - b.y))) / (box.width * box.height);

describe.each(['entropy', 'attention'] as const)('position=%s keeps the region sharp keeps', (strategy) => {
  it.each(PHOTOS)('%s', async (file) => {
    const input = await inputOf(file);
    const { width = 0, height = 0, orientation = 1 } = await sharp(input).metadata();
    for (const box of boxesFor(orientation >= 5 ? { width: height, height: width } : { width, height })) {
      const operation: Transform = { steps: [{ op: 'resize', keepAspectRatio: true, fit: 'cover', position: { kind: 'smart', strategy }, ...box }], quality: 100, format: 'png' };
      const result = await processImage(new Uint8Array(input), operation, LIMITS);
      expect([result.width, result.height]).toEqual([box.width, box.height]);
      const theirs = await raw(sharp(input).rotate().resize(box.width, box.height, { fit: 'cover', position: strategy }));
      const resized = await resizedBySharp(file, input, box);
      const mine = locate(await raw(sharp(result.bytes)), resized);
      const sharpAt = { x: -(theirs.info.cropOffsetLeft ?? 0), y: -(theirs.info.cropOffsetTop ?? 0) };
      const share = overlap(mine, sharpAt, box);
      if (share < 1) console.log(`${strategy} ${file} ${box.width}x${box.height}: ours ${mine.x},${mine.y} sharp ${sharpAt.x},${sharpAt.y} overlap ${(100 * share).toFixed(1)}%`);
      expect(share).toBeGreaterThanOrEqual(MIN_OVERLAP);
    }
  });
});
