import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  asIcc, curveTag, DISPLAY_P3, iccProfile, lut16Tag, lutAToBTag, rgbProfile, SRGB_TRC, u32, xyzTag,
} from '../../../../test/support/icc-writer';
import { parseIccProfile, readXyzTag } from './icc';
import { readCurve } from './icc-curve';
import { toSrgb } from './index';

const P3 = rgbProfile(DISPLAY_P3, SRGB_TRC);

/** One reddish pixel through `toSrgb`; an unusable profile leaves it as it is. */
function convertRed(profile: Uint8Array): number[] {
  return [...toSrgb({ data: new Uint8Array([200, 40, 30, 255]), width: 1, height: 1 }, asIcc(profile)).data];
}

describe('parseIccProfile', () => {
  it('reads the header, the tag table and XYZ tags', () => {
    const profile = parseIccProfile(iccProfile({ colorSpace: 'RGB ', version: 2, tags: [['wtpt', xyzTag([0.9505, 1, 1.089])]] }))!;
    expect(profile).toMatchObject({ colorSpace: 'RGB ', pcs: 'XYZ ', version: 2 });
    expect(readXyzTag(profile, 'wtpt')!.map((v) => v.toFixed(4))).toEqual(['0.9505', '1.0000', '1.0890']);
  });

  it('reads curv (identity, gamma, table) and para types 0-4', () => {
    const at = (trc: Parameters<typeof curveTag>[0], x: number) => readCurve(new Uint8Array(curveTag(trc))).curve(x);
    expect(at('identity', 0.3)).toBeCloseTo(0.3, 6);
    expect(at({ gamma: 2.2 }, 0.5)).toBeCloseTo(0.5 ** (563 / 256), 6); // u8Fixed8: 2.2 is stored as 563/256
    expect(at({ table: [0, 0x8000, 0xffff] }, 0.25)).toBeCloseTo(0x4000 / 65535, 6);
    expect(at({ parametric: [2] }, 0.5)).toBeCloseTo(0.25, 4);
    expect(at({ parametric: [1, 2, -0.5] }, 0.2)).toBe(0); // below -b/a
    expect(at({ parametric: [1, 2, -0.5, 0.1] }, 0.5)).toBeCloseTo(0.6, 4);
    expect(at({ parametric: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045] }, 0.02)).toBeCloseTo(0.02 / 12.92, 5);
    expect(at({ parametric: [1, 1, 0, 0.5, 0.5, 0.1, 0.2] }, 0.25)).toBeCloseTo(0.325, 4);
  });

  it('treats hostile or broken profiles as no profile, without throwing or allocating', () => {
    const untouched = [200, 40, 30, 255];
    expect(convertRed(P3)).not.toEqual(untouched);
    const withTagCount = (count: number) => {
      const bytes = P3.slice();
      new DataView(bytes.buffer).setUint32(128, count);
      return bytes;
    };
    const withTagOffset = (index: number, offset: number) => {
      const bytes = P3.slice();
      new DataView(bytes.buffer).setUint32(132 + 12 * index + 4, offset);
      return bytes;
    };
    const hugeClut = lutAToBTag({ inputs: 3, b: ['identity', 'identity', 'identity'], clut: { points: [255, 255, 255], precision: 2, values: [] } });
    const hugeGridMft2 = lut16Tag(3, 255, []);
    const hugeCurve = [...'curv'].map((c) => c.charCodeAt(0)).concat([0, 0, 0, 0], u32(0xffffffff));
    const rgbLut = (tag: number[]) => iccProfile({ colorSpace: 'RGB ', pcs: 'Lab ', tags: [['A2B0', tag]] });
    const hostile = [
      new Uint8Array(0),
      P3.subarray(0, 100), // shorter than the header
      P3.subarray(0, P3.length - 1), // size field larger than the bytes
      withTagCount(0xffffffff),
      withTagCount(1025),
      withTagCount(500), // table runs past the profile
      withTagOffset(1, 0xfffffff0), // rXYZ offset far out of range
      withTagOffset(4, P3.length - 4), // rTRC straddles the end
      rgbLut(hugeClut),
      rgbLut(hugeGridMft2),
      rgbLut(lutAToBTag({ inputs: 3, b: ['identity', 'identity', 'identity'], clut: { points: [1, 4, 4], precision: 2, values: [] } })),
      iccProfile({ colorSpace: 'RGB ', tags: [['rXYZ', xyzTag([0.4, 0.2, 0])], ['gXYZ', xyzTag([0.4, 0.7, 0.1])], ['bXYZ', xyzTag([0.1, 0, 0.7])], ['rTRC', hugeCurve], ['gTRC', hugeCurve], ['bTRC', hugeCurve]] }),
      iccProfile({ colorSpace: 'RGB ', pcs: 'Lab ', tags: [['A2B0', [1, 2, 3]]] }),
      iccProfile({ colorSpace: 'RGB ', tags: [['rXYZ', curveTag('identity')]] }),
      iccProfile({ colorSpace: 'RGB ', tags: [] }),
      iccProfile({ colorSpace: 'XCLR', tags: [['A2B0', hugeClut]] }),
    ];
    for (const [i, profile] of hostile.entries()) {
      const start = performance.now();
      expect(convertRed(profile), `hostile profile ${i}`).toEqual(untouched);
      expect(performance.now() - start, `hostile profile ${i}`).toBeLessThan(200);
    }
  });

  it('never throws for mutated or truncated profiles', () => {
    const lutProfile = iccProfile({ colorSpace: 'RGB ', pcs: 'Lab ', tags: [['A2B0', lut16Tag(3, 2, new Array(24).fill(0x8000))], ['wtpt', xyzTag([0.9642, 1, 0.8249])]] });
    fc.assert(
      fc.property(
        fc.constantFrom(P3, lutProfile),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        fc.nat(),
        (base, edits, cut) => {
          const bytes = base.slice(0, base.length - (cut % 16));
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          const out = convertRed(bytes);
          expect(out[3]).toBe(255);
        },
      ),
      { numRuns: 300 },
    );
  });
});
