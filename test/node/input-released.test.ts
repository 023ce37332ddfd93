/// <reference types="node" />
/**
 * A run whose encoder works on a picture it has collected (WebP) lets go of its input once the
 * last row has been decoded: the memory plan counts the upload only until then, so every
 * reference to it must really be gone, or the isolate would hold more than it counts. Checked in
 * Node, whose collector can be asked to run: at the run's turns during the encode, the input's
 * buffer has been collected.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import type { CpuTurns, Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const LIMITS = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 100 * 2 ** 20 };

/** Runs `transform` on a copy of `file` that nothing else holds; whether the copy was collected before the run ended, and the result. */
async function collectedDuringRun(file: Uint8Array, transform: Transform) {
  let input: Uint8Array | null = file.slice();
  const weak = new WeakRef(input.buffer);
  let collected = false;
  const share: CpuTurns = {
    contended: () => false,
    turn: async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      collectGarbage();
      if (weak.deref() === undefined) collected = true;
    },
  };
  const running = processImage(input, transform, LIMITS, { share });
  input = null;
  const result = await running;
  return { collected, result };
}

describe('the input of a run whose encoder collects the picture', () => {
  it.each([
    ['a JPEG photo', 'photos/photo-12mp.jpg', { steps: [{ op: 'resize', width: 2000 }], format: 'webp', quality: 80 }],
    ['a WebP photo', 'photos/photo-12mp.webp', { steps: [{ op: 'crop', x: 0, y: 0, width: 2000, height: 1500 }], format: 'webp', quality: 80 }],
    ['an AVIF photo', 'photos/photo-12mp.avif', { steps: [{ op: 'resize', width: 1600 }], format: 'webp', quality: 80 }],
  ] as const)('is collected while the encoder works: %s', async (_name, file, transform) => {
    const { collected, result } = await collectedDuringRun(new Uint8Array(readFileSync(path.join(CORPUS, file))), transform as Transform);
    expect(result.bytes.byteLength).toBeGreaterThan(0);
    expect(collected).toBe(true);
  });

  it('is collected while the encoder works: a PNG photo', async () => {
    const png = new Uint8Array(await sharp(path.join(CORPUS, 'photos/photo-1mp.jpg')).png().toBuffer());
    const { collected } = await collectedDuringRun(png, { steps: [], format: 'webp', quality: 80 });
    expect(collected).toBe(true);
  });

  it('is kept by a run that may encode again (quality=auto)', async () => {
    const { collected } = await collectedDuringRun(new Uint8Array(readFileSync(path.join(CORPUS, 'photos/photo-1mp.jpg'))), { steps: [], format: 'webp', quality: 'auto' });
    expect(collected).toBe(false);
  });
});
