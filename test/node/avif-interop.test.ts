/// <reference types="node" />
/**
 * Our AVIF grids as other readers take them: libheif (sharp, libvips) refuses a file with more than
 * 256 items with data (its security limit on `iloc`), which a 48 MP result in 400 px tiles passed.
 * Small tiles make the same count on a small picture here.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { AVIF_MAX_ITEMS } from '../../src/image/formats/avif/encode-layout';
import { avifEncoderWith } from '../../src/image/formats/avif/encode';
import { readAvifStructure } from '../support/avif-structure';
import { encodeToBytes } from '../../src/image/result-buffer';
import { frameSource } from '../support/row-sources';

function picture(width: number, height: number, alpha: boolean) {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const edge = Math.hypot(x - width / 2, y - height / 2) < height / 3;
      data.set([(x * 255) / width, (y * 255) / height, edge ? 200 : 40, alpha && !edge ? 0 : 255], (y * width + x) * 4);
    }
  }
  return { data, width, height };
}

describe('AVIF grids read by libheif (sharp)', () => {
  it.each([false, true])('a grid that 64 px tiles would make of 324 tiles stays within 256 items and decodes (alpha: %s)', async (alpha) => {
    const [width, height] = [1100, 1100];
    const source = picture(width, height, alpha);
    const avif = await encodeToBytes(avifEncoderWith({ maxTileSide: 64 }), frameSource(source, { alpha }), { quality: 80, orientation: 1 });
    const items = readAvifStructure(avif).items.size;
    expect(items).toBeLessThanOrEqual(AVIF_MAX_ITEMS);
    const { data, info } = await sharp(avif).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([width, height]);
    let squared = 0;
    for (let i = 0; i < data.length; i++) squared += (data[i] - source.data[i]) ** 2;
    expect(10 * Math.log10((255 * 255) / (squared / data.length))).toBeGreaterThan(30);
  }, 60_000);
});
