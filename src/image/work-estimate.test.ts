import { describe, expect, it } from 'vitest';
import { corpus } from '../../test/support/image-testing';
import type { Transform } from './operations';
import { processImage } from './pipeline';

const LIMITS = { maxInputPixels: 40e6, maxOutputPixels: 40e6, memoryBudgetBytes: 4096 * 2 ** 20 };

/** The work a run announces when it asks to be admitted, and the work it then reports at its turns. */
async function announcedAndDone(input: Uint8Array, transform: Transform) {
  let announced = 0;
  let done = 0;
  const share = { contended: () => false, turn: async (_passes?: number, sliceMs = 0) => void (done += sliceMs) };
  await processImage(input, transform, LIMITS, {
    admit: async (_bytes, estimatedWorkMs) => {
      announced = estimatedWorkMs;
      return () => {};
    },
    share,
  });
  return { announced, done };
}

describe("a run's estimated work", () => {
  it('grows with the pixels decoded, the steps and the pixels encoded', async () => {
    const small = await announcedAndDone(await corpus('photos/photo-1mp.jpg'), { steps: [{ op: 'resize', width: 400, keepAspectRatio: true }], format: 'webp', quality: 80 });
    const large = await announcedAndDone(await corpus('photos/photo-12mp.jpg'), { steps: [], format: 'jpeg', quality: 80 });
    const blurred = await announcedAndDone(await corpus('photos/photo-1mp.jpg'), { steps: [{ op: 'blur', sigma: 2 }], format: 'jpeg', quality: 80 });
    expect(small.announced).toBeGreaterThan(1);
    expect(large.announced).toBeGreaterThan(10 * small.announced);
    expect(blurred.announced).toBeGreaterThan(small.announced);
  });

  it('is near what the run then reports at its turns (its work, corrected by the pace its turns measure)', async () => {
    const { announced, done } = await announcedAndDone(await corpus('photos/photo-12mp.jpg'), { steps: [{ op: 'resize', width: 1600, keepAspectRatio: true }], format: 'webp', quality: 80 });
    console.log(`12 MP JPEG to 1600 px WebP: announced ${announced.toFixed(0)} ms, reported ${done.toFixed(0)} ms`);
    expect(done).toBeGreaterThan(announced / 4);
    expect(done).toBeLessThan(announced * 4);
  });
});
