import { describe, expect, it } from 'vitest';
import { asIcc, iccProfile, legacyLab16, lut16Tag, lutAToBTag, rgbProfile, SRGB, SRGB_TRC, srgb8FromLab, v4Lab16 } from '../../../../test/support/icc-writer';
import type { CmykImage } from '../../types';
import defaultCmykProfile from './default-cmyk.icc';
import { toSrgb } from './index';

/** A made-up press: paper white, each ink darkens and shifts a and b; inputs 0 or 1. */
function nodeLab(c: number, m: number, y: number, k: number): number[] {
  const l = Math.max(0, 100 - 45 * c - 35 * m - 8 * y - 70 * k - 10 * c * m);
  return [l, -30 * c + 60 * m - 5 * y, -45 * c - 10 * m + 75 * y];
}

/** Node values of a 2-point grid, C slowest, K fastest, encoded by `encode`. */
function clutOf(encode: (lab: number[]) => number[]): number[] {
  const values: number[] = [];
  for (const c of [0, 1]) for (const m of [0, 1]) for (const y of [0, 1]) for (const k of [0, 1]) values.push(...encode(nodeLab(c, m, y, k)));
  return values;
}

const legacyProfile = iccProfile({ colorSpace: 'CMYK', pcs: 'Lab ', version: 2, tags: [['A2B0', lut16Tag(4, 2, clutOf(legacyLab16))]] });
const v4Profile = iccProfile({
  colorSpace: 'CMYK',
  pcs: 'Lab ',
  tags: [['A2B0', lutAToBTag({
    inputs: 4,
    b: ['identity', 'identity', 'identity'],
    clut: { points: [2, 2, 2, 2], precision: 2, values: clutOf(v4Lab16) },
    a: ['identity', 'identity', 'identity', 'identity'],
  })]],
});

function cmyk(pixels: number[][]): CmykImage {
  return { colorModel: 'cmyk', data: new Uint8Array(pixels.flat()), width: pixels.length, height: 1 };
}

function convert(profile: Uint8Array | null, pixels: number[][]): number[][] {
  const out = toSrgb(cmyk(pixels), asIcc(profile));
  expect(out.width * out.height * 4).toBe(out.data.length);
  return pixels.map((_, i) => [...out.data.subarray(4 * i, 4 * i + 4)]);
}

function expectClose(actual: number[], expected: number[], tolerance: number, label: string) {
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i] - expected[i]), `${label}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance);
}

const corners = [0, 1].flatMap((c) => [0, 1].flatMap((m) => [0, 1].flatMap((y) => [0, 1].map((k) => [c, m, y, k]))));

describe('toSrgb with CMYK profiles', () => {
  it('hits the CLUT grid nodes exactly (legacy 16-bit Lab of lut16Type and v4 Lab of lutAToBType)', () => {
    for (const profile of [legacyProfile, v4Profile]) {
      const result = convert(profile, corners.map((n) => n.map((v) => v * 255)));
      corners.forEach((node, i) => expect(result[i], `node ${node}`).toEqual([...srgb8FromLab(nodeLab(...(node as [number, number, number, number]))), 255]));
    }
  });

  it('interpolates between nodes (multilinear along edges, within a level or two inside)', () => {
    const lerp = (a: number[], b: number[], t: number) => a.map((v, i) => v + (b[i] - v) * t);
    for (const profile of [legacyProfile, v4Profile]) {
      // Along an edge of the grid every interpolation is linear in Lab.
      const edges: [number[], number[], number[]][] = [
        [[128, 0, 0, 0], nodeLab(0, 0, 0, 0), nodeLab(1, 0, 0, 0)],
        [[0, 0, 64, 0], nodeLab(0, 0, 0, 0), nodeLab(0, 0, 1, 0)],
        [[0, 0, 0, 200], nodeLab(0, 0, 0, 0), nodeLab(0, 0, 0, 1)],
        [[255, 100, 0, 0], nodeLab(1, 0, 0, 0), nodeLab(1, 1, 0, 0)],
      ];
      for (const [pixel, from, to] of edges) {
        const t = Math.max(...pixel.map((v) => (v % 255 === 0 ? 0 : v))) / 255;
        expectClose(convert(profile, [pixel])[0], [...srgb8FromLab(lerp(from, to, t)), 255], 1, `edge ${pixel}`);
      }
      // Inside a cell: the value lies between the sRGB values of the cell's corners.
      const [inside] = convert(profile, [[100, 150, 50, 30]]);
      const cornerValues = corners.map((n) => srgb8FromLab(nodeLab(...(n as [number, number, number, number]))));
      for (let ch = 0; ch < 3; ch++) {
        expect(inside[ch]).toBeGreaterThanOrEqual(Math.min(...cornerValues.map((v) => v[ch])));
        expect(inside[ch]).toBeLessThanOrEqual(Math.max(...cornerValues.map((v) => v[ch])));
      }
    }
    // Both encodings describe the same press: they agree everywhere.
    const sample = Array.from({ length: 300 }, (_, i) => [(i * 37) % 256, (i * 91) % 256, (i * 13) % 256, (i * 151) % 256]);
    const a = convert(legacyProfile, sample);
    const b = convert(v4Profile, sample);
    sample.forEach((pixel, i) => expectClose(a[i], b[i], 1, `${pixel}`));
  });

  it('reads CMYK without a usable profile with the default profile (libvips\' "Chemical proof")', () => {
    const pixels = [[0, 0, 0, 0], [0, 0, 0, 255], [255, 0, 0, 0], [0, 255, 255, 0], [128, 64, 0, 128]];
    const expected = convert(new Uint8Array(defaultCmykProfile), pixels);
    const [paper, black, cyan, red] = expected;
    expect(Math.min(...paper.slice(0, 3))).toBeGreaterThan(230);
    expect(Math.max(...black.slice(0, 3))).toBeLessThan(60);
    expect(cyan[0]).toBeLessThan(Math.min(cyan[1], cyan[2]) - 50);
    expect(red[0]).toBeGreaterThan(Math.max(red[1], red[2]) + 50);
    const hostile = iccProfile({
      colorSpace: 'CMYK',
      pcs: 'Lab ',
      tags: [['A2B0', lutAToBTag({ inputs: 4, b: ['identity', 'identity', 'identity'], clut: { points: [255, 255, 255, 255], precision: 2, values: [] } })]],
    });
    for (const profile of [null, rgbProfile(SRGB, SRGB_TRC), hostile, new Uint8Array(50)]) {
      expect(convert(profile, pixels)).toEqual(expected);
    }
  });
});
