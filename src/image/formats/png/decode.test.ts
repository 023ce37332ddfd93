import { describe, expect, it } from 'vitest';
import { corpus, PNGSUITE, sameBytes } from '../../../../test/support/image-testing';
import { buildPng, expectedRgba, hashedSamples, type PngSpec } from '../../../../test/support/png-builder';
import { referenceDecode } from '../../../../test/workers/images';
import type { Region } from '../../operations';
import { damage, decodePng } from '../../../../test/support/png-testing';
import { readPngHeader } from './header';
import { pngDecodeBytes } from './memory';
import { openDecode } from '../../../../test/support/formats';

const DEPTHS: Record<PngSpec['colourType'], PngSpec['bitDepth'][]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** Every colour type and bit depth, with and without tRNS where it applies. */
function specs(width: number, height: number, interlaced: boolean): PngSpec[] {
  const all: PngSpec[] = [];
  for (const [type, depths] of Object.entries(DEPTHS)) {
    const colourType = Number(type) as PngSpec['colourType'];
    for (const bitDepth of depths) {
      const sample = hashedSamples(bitDepth, colourType);
      const base: PngSpec = { width, height, colourType, bitDepth, interlaced, sample };
      if (colourType === 3) {
        // Fewer entries than indexes: some pixels point past the palette.
        const entries = Math.max(1, (1 << bitDepth) - 1);
        const palette = Array.from({ length: entries }, (_, i) => [i * 37 & 255, i * 91 & 255, i * 13 & 255] as [number, number, number]);
        all.push({ ...base, palette }, { ...base, palette, transparency: Array.from({ length: Math.ceil(entries / 2) }, (_, i) => i * 40 & 255) });
      } else {
        all.push(base);
        // The key is the first pixel's colour, so some pixels match it.
        if (colourType === 0) all.push({ ...base, transparency: [sample(0, 0, 0)] });
        if (colourType === 2) all.push({ ...base, transparency: [0, 1, 2].map((c) => sample(0, 0, c)) });
      }
    }
  }
  return all;
}

const describeSpec = (s: PngSpec) => `type ${s.colourType} depth ${s.bitDepth}${s.transparency ? ' tRNS' : ''}${s.interlaced ? ' Adam7' : ''} ${s.width}x${s.height}`;

describe('PNG decoder: PngSuite', () => {
  it('decodes every valid file to exactly the reference decoder\'s pixels', { timeout: 120_000 }, async () => {
    const valid = PNGSUITE.filter((path) => !/\/x[^/]*\.png$/.test(path));
    expect(valid.length).toBeGreaterThan(150);
    for (const path of valid) {
      const input = await corpus(path);
      const [ours, reference] = [await decodePng(input), await referenceDecode(input)];
      expect([ours.width, ours.height], path).toEqual([reference.width, reference.height]);
      expect(sameBytes(ours.data, reference.data), path).toBe(true);
    }
  });

  it('refuses every corrupt x* file as damaged', async () => {
    const corrupt = PNGSUITE.filter((path) => /\/x[^/]*\.png$/.test(path));
    expect(corrupt.length).toBe(14);
    for (const path of corrupt) await damage(async () => decodePng(await corpus(path)));
  });
});

describe('PNG decoder: generated files of every colour type, bit depth and interlace', () => {
  for (const interlaced of [false, true]) {
    it(`gives the exact pixels${interlaced ? ' (Adam7)' : ''}, as the reference decoder does`, { timeout: 60_000 }, async () => {
      // 1x1 and 3x2 leave Adam7 passes empty; 37x13 has partial bytes at the end of sub-byte rows.
      for (const [width, height] of [[1, 1], [3, 2], [37, 13], [8, 9]]) {
        for (const spec of specs(width, height, interlaced)) {
          const input = await buildPng(spec);
          const expected = expectedRgba(spec);
          const ours = await decodePng(input);
          expect(sameBytes(ours.data, expected), describeSpec(spec)).toBe(true);
          if (width === 37) expect(sameBytes((await referenceDecode(input)).data, expected), `reference: ${describeSpec(spec)}`).toBe(true);
        }
      }
    });
  }

  it('reports alpha for colour types with alpha and any tRNS, grey for types 0 and 4', async () => {
    for (const spec of specs(4, 4, false)) {
      const source = await openDecode(await buildPng(spec), { shrink: 1, region: null });
      expect(source.alpha, describeSpec(spec)).toBe(spec.colourType === 4 || spec.colourType === 6 || spec.transparency !== undefined);
      expect(source.grey, describeSpec(spec)).toBe(spec.colourType === 0 || spec.colourType === 4);
      expect(source.model).toBe('rgba');
      source.close();
    }
  });

  it('gives the same pixels whatever the band height', async () => {
    for (const interlaced of [false, true]) {
      const spec: PngSpec = { width: 29, height: 41, colourType: 6, bitDepth: 8, interlaced, sample: hashedSamples(8) };
      const input = await buildPng(spec);
      const expected = expectedRgba(spec);
      for (const bandRows of [1, 2, 7, 16, 41, 64]) {
        expect(sameBytes((await decodePng(input, null, bandRows)).data, expected), `${bandRows} rows${interlaced ? ', Adam7' : ''}`).toBe(true);
      }
    }
  });

  it('decodes a region to exactly the crop of the whole image', async () => {
    const regions: Region[] = [
      { x: 0, y: 0, width: 1, height: 1 },
      { x: 5, y: 2, width: 17, height: 11 },
      { x: 36, y: 12, width: 1, height: 1 },
      { x: 1, y: 0, width: 36, height: 13 },
      { x: 7, y: 9, width: 8, height: 4 },
    ];
    for (const spec of [...specs(37, 13, false), ...specs(37, 13, true)]) {
      const input = await buildPng(spec);
      const whole = expectedRgba(spec);
      for (const region of regions) {
        const ours = await decodePng(input, region, 3);
        const crop = new Uint8Array(region.width * region.height * 4);
        for (let y = 0; y < region.height; y++) {
          crop.set(whole.subarray(((region.y + y) * spec.width + region.x) * 4, ((region.y + y) * spec.width + region.x + region.width) * 4), y * region.width * 4);
        }
        expect([ours.width, ours.height]).toEqual([region.width, region.height]);
        expect(sameBytes(ours.data, crop), `${describeSpec(spec)}, region ${JSON.stringify(region)}`).toBe(true);
      }
    }
  });

  it('holds no more than its memory bound, in JavaScript (nothing) and in its WebAssembly memory', async () => {
    for (const spec of [...specs(301, 40, false), ...specs(301, 40, true), ...specs(3000, 20, false), ...specs(3000, 20, true)]) {
      const input = await buildPng(spec);
      const { heldBytes, wasmBytes } = await decodePng(input);
      const header = readPngHeader(input);
      expect(heldBytes, describeSpec(spec)).toBe(0);
      expect(wasmBytes, describeSpec(spec)).toBeLessThanOrEqual(pngDecodeBytes(header, header.width));
    }
  });
});
