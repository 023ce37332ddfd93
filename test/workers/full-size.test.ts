import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/formats/index';
import { largeInput } from '../support/image-testing';
import { readDimensions } from '../support/formats';

/*
 * Real photos at full size with the default configuration: every operation succeeds, holds at
 * most what a deployed isolate can give it (64 MiB for 12 MP; 24 and 48 MP at the edge of the Pro plan are in test/workers/plan-edge/, every 24 MP input in `npm run bench`'s matrix), never more than
 * the memory guard predicted, and gives a file of the right size. The inputs are the corpus photos
 * and what sharp makes of them (test/support/large-inputs.ts).
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;

const OPERATIONS: Record<string, Transform> = {
  'convert to JPEG q80': { steps: [], format: 'jpeg', quality: 80 },
  'convert to JPEG q95': { steps: [], format: 'jpeg', quality: 95 },
  'convert to WebP': { steps: [], format: 'webp', quality: 80 },
  'resize to 1600 px WebP': { steps: [{ op: 'resize', width: 1600, keepAspectRatio: true }], format: 'webp', quality: 80 },
  'crop 2000x1500': { steps: [{ op: 'crop', x: 500, y: 400, width: 2000, height: 1500 }], quality: 80 },
  'convert to PNG': { steps: [], format: 'png', quality: 80 },
  'convert to AVIF': { steps: [], format: 'avif', quality: 60 },
};

const EVERY_OPERATION_BUT_AVIF = Object.keys(OPERATIONS).filter((name) => name !== 'convert to AVIF');

const CASES: [input: string, operations: string[], maxHeldMiB: number][] = [
  ['jpeg-12mp.jpg', Object.keys(OPERATIONS), 64],
  ['jpeg-12mp-progressive.jpg', EVERY_OPERATION_BUT_AVIF, 64],
  ['jpeg-12mp-rotated.jpg', EVERY_OPERATION_BUT_AVIF, 64],
  ['webp-12mp.webp', EVERY_OPERATION_BUT_AVIF, 64],
  ['png-12mp.png', Object.keys(OPERATIONS), 64],
  ['avif-12mp.avif', ['convert to JPEG q80', 'convert to PNG', 'resize to 1600 px WebP', 'crop 2000x1500'], 64],
];

function expectedSize(operation: Transform, displayed: { width: number; height: number }) {
  const [step] = operation.steps;
  if (step?.op === 'crop') return { width: step.width, height: step.height };
  if (step?.op === 'resize') return { width: 1600, height: Math.round((displayed.height * 1600) / displayed.width) };
  return displayed;
}

describe('full-size photos with the default configuration', () => {
  for (const [name, operations, maxHeldMiB] of CASES) {
    for (const operationName of operations) {
      it(`${name}: ${operationName}`, async () => {
        const operation = OPERATIONS[operationName];
        const input = await largeInput(name);
        const result = await processImage(input, operation, DEFAULTS);
        const stored = readDimensions(result.format, result.bytes);
        const rotated = name.includes('rotated');
        const source = readDimensions(detectFormat(input)!, input);
        const displayed = rotated ? { width: source.height, height: source.width } : source;
        expect(stored).toEqual(expectedSize(operation, displayed));
        expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
        expect(result.plannedPeakBytes).toBeLessThanOrEqual(DEFAULTS.memoryBudgetBytes);
        expect(result.peakBytes / MiB).toBeLessThanOrEqual(maxHeldMiB);
      });
    }
  }
});
