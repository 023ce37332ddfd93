/// <reference types="node" />
/**
 * test/support/dssim.ts, the independent metric quality=auto is judged by, against dssim 3.5
 * (kornelski/dssim's dssim-core, built natively and fed the same RGBA pixels): docs/decisions.md,
 * "quality=auto", says how the reference figures were made.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { FORMATS } from '../../src/image/formats/index';
import { encodeToBytes } from '../../src/image/result-buffer';
import { pictureRows } from '../../src/image/stages/rows';
import type { ImageFormat, RgbaImage } from '../../src/image/types';
import { dssim } from '../support/dssim';
import { distorted, texturedPicture, type Distortion } from '../support/quality-pictures';
import { collectFrame } from '../support/row-sources';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const opaque = { model: 'rgba' as const, alpha: false, grey: false };

async function roundTrip(format: ImageFormat, picture: RgbaImage & { data: Uint8Array }, quality: number): Promise<RgbaImage> {
  const bytes = await encodeToBytes(FORMATS[format].encoder, pictureRows({ ...picture, data: picture.data.slice() }, opaque), { quality, orientation: 1 });
  return collectFrame(await FORMATS[format].read(bytes).decode({ shrink: 1, region: null }));
}

/** Relative agreement with the reference: dssim-core rounds to single precision and takes cube roots by a polynomial. */
const expectClose = (ours: number, reference: number, relative = 1e-3) => expect(Math.abs(ours - reference) / reference).toBeLessThan(relative);

describe('DSSIM (test support)', () => {
  const picture = texturedPicture(160, 120);

  it('is 0 for identical pictures', () => {
    expect(dssim(picture, picture)).toBe(0);
  });

  it.each([
    ['blur', 0.00385693],
    ['noise', 0.00249297],
    ['banding', 0.00812846],
    ['shift', 0.00036586],
  ] as const)('measures a %s picture as dssim does', (distortion, reference) => {
    expectClose(dssim(picture, distorted(picture, distortion as Distortion)), reference);
  });

  it("measures the service's own JPEG as dssim does, and the 1 MP photo at q30 and q80", async () => {
    expectClose(dssim(picture, await roundTrip('jpeg', picture, 40)), 0.00487849);
    const photo = await collectFrame(await FORMATS.jpeg.read(new Uint8Array(readFileSync(path.join(CORPUS, 'photos/photo-1mp.jpg')))).decode({ shrink: 1, region: null }));
    const pixels = { ...photo, data: photo.data as Uint8Array };
    expectClose(dssim(pixels, await roundTrip('jpeg', pixels, 30)), 0.01417636);
    expectClose(dssim(pixels, await roundTrip('jpeg', pixels, 80)), 0.00357263);
  });

  it('measures small and narrow pictures as dssim does (it stops halving below 8x8)', () => {
    for (const [width, height, reference] of [[37, 29, 0.0044438], [7, 7, 0.0133064], [9, 300, 0.00698817]] as const) {
      const small = texturedPicture(width, height);
      expectClose(dssim(small, distorted(small, 'blur')), reference);
    }
  });
});
