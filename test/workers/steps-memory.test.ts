import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { Step } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import { largeInput } from '../support/image-testing';

/*
 * Every step streams: a 24 MP photo cropped to 16:9, resized to 1600 px, turned a quarter and
 * sharpened into WebP is planned at no more than the plain resize of the photo to 1600 px WebP, and
 * without the sharpen holds no more either (the turn is the WebP encoder placing rows, the crop the
 * decoder's region). Sharpening adds its window of rows (about 0.2 MB here) and detail, and
 * libwebp's own buffers grow with the detail of the picture they code (its tokens): the sharpened
 * chain holds up to about 1 MiB more than the plain resize (measured: 13.8 against 13.4 MiB; the
 * photo resized and sharpened without the crop holds 14.9).
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;

describe('a chain of steps on a 24 MP photo', () => {
  it('crop -> resize -> rotate 90 -> sharpen -> WebP holds no more than the plain resize, but for the detail libwebp codes', async () => {
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
    expect(chain.peakBytes).toBeLessThanOrEqual(plain.peakBytes + MiB);
  });
});
