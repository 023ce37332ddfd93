import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { Step } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import { largeInput } from '../support/image-testing';

/*
 * Every step streams: a 24 MP photo cropped to 16:9, resized to 1600 px, turned a quarter and
 * sharpened into WebP is planned at no more than the plain resize of the photo to 1600 px WebP,
 * and holds no more either. The crop is decoded at 1/2 as the plain resize is (plan.ts
 * shrinkCropOnLoad); the turn is the WebP encoder placing rows; the
 * sharpen holds its window of rows (about 0.3 MB here). libwebp's token buffer grows with the detail
 * it codes (the sharpened picture's is 0.5 MB larger), but the upload is let go before libwebp
 * does that work (ImageFile.release), so the run's fullest moment is while rows stream, where the
 * chain holds less (measured: 10.27 against 10.52 MiB; cropped and turned, 9.95; with the crop's
 * edges between the 1/2 decode's pixels, decoded at 1/2 all the same and resized from where they fall).
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;

describe('a chain of steps on a 24 MP photo', () => {
  it('crop -> resize -> rotate 90 -> sharpen -> WebP holds no more than the plain resize', async () => {
    const input = await largeInput('jpeg-24mp.jpg');
    const resize: Step = { op: 'resize', width: 1600 };
    const geometry: Step[] = [{ op: 'crop', x: 600, y: 650, width: 4800, height: 2700 }, resize, { op: 'rotate', angle: 90 }];
    const run = (steps: Step[]) => processImage(input, { steps, format: 'webp', quality: 80 }, DEFAULTS);
    const plain = await run([resize]);
    const turned = await run(geometry);
    const chain = await run([...geometry, { op: 'sharpen', sigma: 1 }]);
    const held = (result: typeof plain) => `${(result.peakBytes / MiB).toFixed(2)} of ${(result.plannedPeakBytes / MiB).toFixed(2)} MiB planned`;
    console.log(`24 MP -> 1600 px WebP: ${held(plain)}; cropped, resized and turned: ${held(turned)}; and sharpened: ${held(chain)}`);
    expect([chain.width, chain.height]).toEqual([900, 1600]);
    for (const result of [plain, turned, chain]) expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
    expect(chain.plannedPeakBytes).toBeLessThanOrEqual(plain.plannedPeakBytes);
    expect(turned.peakBytes).toBeLessThanOrEqual(plain.peakBytes);
    expect(chain.peakBytes).toBeLessThanOrEqual(plain.peakBytes);
    // A crop whose edges fall between the pixels of the 1/2 decode is decoded at 1/2 too.
    const offGrid = await run([{ op: 'crop', x: 601, y: 651, width: 4799, height: 2699 }, resize, { op: 'rotate', angle: 90 }, { op: 'sharpen', sigma: 1 }]);
    console.log(`and with the crop off the 1/2 grid: ${held(offGrid)}`);
    expect([offGrid.width, offGrid.height]).toEqual([900, 1600]);
    expect(offGrid.peakBytes).toBeLessThanOrEqual(plain.peakBytes);
  });
});
