import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import { buildPng, type PngSpec } from '../support/png-builder';

/*
 * The memory guard against measurement for PNG inputs of every colour type and bit depth, plain
 * and Adam7, at 1, 4, 12 and 24 MP (generated: the corpus has no large PNG of most kinds): what a
 * run holds never exceeds what was predicted from the header, and what is predicted fits the
 * budget of the default configuration.
 */

const MiB = 2 ** 20;
const DEFAULTS = readSettings({}).pixelLimits.pro;

type Kind = [colourType: PngSpec['colourType'], bitDepth: PngSpec['bitDepth']];
const EVERY_KIND: Kind[] = [
  [0, 1], [0, 2], [0, 4], [0, 8], [0, 16],
  [2, 8], [2, 16],
  [3, 1], [3, 2], [3, 4], [3, 8],
  [4, 8], [4, 16],
  [6, 8], [6, 16],
];

/** A compressible picture (bands and ramps) with some transparency where the kind allows it. */
function spec([colourType, bitDepth]: Kind, width: number, height: number, interlaced: boolean): PngSpec {
  const max = 2 ** bitDepth - 1;
  const palette = colourType === 3 ? Array.from({ length: max + 1 }, (_, i): [number, number, number] => [i * 7 % 256, i * 13 % 256, 255 - i % 256]) : undefined;
  return {
    width,
    height,
    colourType,
    bitDepth,
    interlaced,
    sample: (x, y, c) => ((x >> 3) + (y >> 2) * 3 + c * 37) & max,
    palette,
    transparency: colourType === 3 ? [0, 128] : undefined,
    filter: (n) => n % 5,
  };
}

async function expectWithinPrediction(png: PngSpec, operation: Transform, maxHeldMiB: number) {
  const input = await buildPng(png);
  const result = await processImage(input, operation, DEFAULTS);
  const label = `type ${png.colourType}, ${png.bitDepth} bits, ${png.width}x${png.height}${png.interlaced ? ', Adam7' : ''}`;
  expect(result.peakBytes, label).toBeLessThanOrEqual(result.plannedPeakBytes);
  expect(result.plannedPeakBytes, label).toBeLessThanOrEqual(DEFAULTS.memoryBudgetBytes);
  expect(result.peakBytes / MiB, label).toBeLessThanOrEqual(maxHeldMiB);
}

const toJpeg: Transform = { steps: [], format: 'jpeg', quality: 80 };
const toPng: Transform = { steps: [], format: 'png', quality: 80 };

describe('PNG inputs: held <= predicted <= budget', () => {
  it.each(EVERY_KIND)('type %i, %i bits at 1 MP (plain and Adam7) and 4 MP, to JPEG and PNG', async (colourType, bitDepth) => {
    for (const interlaced of [false, true]) await expectWithinPrediction(spec([colourType, bitDepth], 1200, 834, interlaced), toPng, 64);
    await expectWithinPrediction(spec([colourType, bitDepth], 2400, 1667, false), toJpeg, 64);
  });

  it.each([
    [[3, 1], false],
    [[0, 8], false],
    [[2, 8], false],
    [[4, 8], true],
  ] as [Kind, boolean][])('12 MP of type %j (Adam7: %s) to PNG holds at most 64 MiB', async (kind, interlaced) => {
    await expectWithinPrediction(spec(kind, 4000, 3000, interlaced), toPng, 64);
  });

  it.each([[3, 1], [0, 8]] as Kind[])('24 MP of type %i, %i bits to JPEG holds at most 100 MiB', async (colourType, bitDepth) => {
    await expectWithinPrediction(spec([colourType, bitDepth], 6000, 4000, false), toJpeg, 100);
  });
});
