import { describe, expect, it } from 'vitest';
import { corpus, decodeRgba } from '../../test/support/image-testing';
import { texturedPicture } from '../../test/support/quality-pictures';
import { encodeWith } from '../../test/support/image-testing';
import { memoryTarget } from './result-buffer';
import { processImage, processImageInto } from './pipeline';
import { autoShareBytes } from './quality/auto-plan';
import { AUTO_QUALITY, WHOLE_SCORE_MAX_PIXELS } from './quality/calibration';
import { scoreRows } from './quality/score-rows';
import { pictureRows } from './stages/rows';
import type { ResultSink, ResultTarget } from './result-sink';
import type { ImageFormat } from './types';

/*
 * quality=auto's runs (auto-run.ts) on what they hold and write: never more than the memory plan
 * predicted, no more than the plain conversion plus the metric's share, nothing handed to storage
 * but the final file. The choices themselves over the repository's photos are
 * test/workers/quality-auto.test.ts's.
 */

const LIMITS = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };
const MiB = 2 ** 20;
type Auto = 'jpeg' | 'webp' | 'avif';

describe('quality=auto runs', () => {
  it.each([
    ['jpeg', 'photos/photo-1mp.jpg'],
    ['webp', 'photos/photo-1mp.jpg'],
    ['avif', 'photos/photo-1mp.jpg'],
    ['jpeg', 'photos/photo-12mp.jpg'],
    ['webp', 'photos/photo-12mp.jpg'],
    ['avif', 'photos/photo-12mp.jpg'],
  ] as const)('%s from %s: within its plan, and within the plain conversion plus the metric\'s share', async (format: Auto, file) => {
    const input = await corpus(file);
    const plain = await processImage(input, { steps: [], format, quality: 80 }, LIMITS);
    const auto = await processImage(input, { steps: [], format, quality: 'auto' }, LIMITS);
    const share = autoShareBytes(format, auto, auto.size);
    expect(auto.peakBytes).toBeLessThanOrEqual(auto.plannedPeakBytes);
    expect(auto.peakBytes, `held ${(auto.peakBytes / MiB).toFixed(1)} MiB, plain ${(plain.peakBytes / MiB).toFixed(1)} + share ${(share / MiB).toFixed(1)}`).toBeLessThanOrEqual(plain.peakBytes + share);
    expect(auto.score).toMatchObject({ target: AUTO_QUALITY[format].target, measuredOn: auto.width * auto.height <= WHOLE_SCORE_MAX_PIXELS ? 'picture' : 'sample' });
  }, 60_000);

  it('format=best and a correction stay within the plan; the file written is the one chosen, written once', async () => {
    const input = await corpus('photos/photo-1mp.jpg');
    const writes: { format: ImageFormat; bytes: number }[] = [];
    const inMemory = memoryTarget();
    // A target that records what is opened: one sink, opened once the choice is final.
    const target: ResultTarget = {
      heldBytes: inMemory.heldBytes,
      open(format, maxBytes, pace) {
        const sink = inMemory.open(format, maxBytes, pace);
        const recorded: ResultSink = {
          write: (chunk) => sink.write(chunk),
          writeOwned: (bytes) => {
            writes.push({ format, bytes: bytes.byteLength });
            sink.writeOwned(bytes);
          },
          drain: () => sink.drain(),
          get length() {
            return sink.length;
          },
          get heldBytes() {
            return sink.heldBytes;
          },
          get peakHeldBytes() {
            return sink.peakHeldBytes;
          },
        };
        return recorded;
      },
    };
    const best = await processImageInto(input, { steps: [], format: 'best' }, LIMITS, target);
    expect(best.peakBytes).toBeLessThanOrEqual(best.plannedPeakBytes);
    expect(writes).toEqual([{ format: best.format, bytes: best.size }]);
    expect(inMemory.buffer()!.length).toBe(best.size);
  }, 60_000);

  it('scores a picture with transparency as SSIMULACRA 2 does, on grey; a picture no larger than its sample is scored whole', async () => {
    const picture = texturedPicture(300, 200);
    for (let i = 3; i < picture.data.length; i += 4) picture.data[i] = (i >> 2) % 300 < 150 ? 255 : 96;
    const png = await encodeWith('png', picture);
    const result = await processImage(png, { steps: [], format: 'webp', quality: 'auto', qualityTarget: 80 }, LIMITS);
    expect(result.score).toMatchObject({ measuredOn: 'picture', target: 80 });
    const decoded = await decodeRgba('webp', result.bytes);
    const traits = { model: 'rgba' as const, alpha: true, grey: false };
    const recomputed = await scoreRows(pictureRows(picture, traits), pictureRows({ ...decoded, data: new Uint8Array(decoded.data) }, traits));
    expect(Math.abs(result.score!.value - recomputed)).toBeLessThan(0.01);
    expect(result.score!.value).toBeGreaterThanOrEqual(80);
  });
  it('format=best leaves out what cannot be made beside the others: a 24 MP photo, where holding an AVIF result does not fit, is still made', async () => {
    const input = await corpus('photos/photo-24mp.jpg');
    const best = await processImage(input, { steps: [], format: 'best' }, LIMITS);
    expect(['jpeg', 'webp', 'avif']).toContain(best.format);
    expect([best.width, best.height]).toEqual([6000, 4000]);
    expect(best.peakBytes).toBeLessThanOrEqual(best.plannedPeakBytes);
    expect(best.plannedPeakBytes).toBeLessThanOrEqual(LIMITS.memoryBudgetBytes);
    const target = AUTO_QUALITY[best.format as Auto].target;
    expect(best.score).toMatchObject({ target, measuredOn: 'sample' });
    expect(best.score!.value).toBeGreaterThanOrEqual(target - 1);
  }, 120_000);
});
