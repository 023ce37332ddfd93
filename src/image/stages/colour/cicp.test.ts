import { describe, expect, it } from 'vitest';
import { expectClose, expectDisplayP3ToSrgb, linearFromSrgb8, multiply3, srgb8FromLinear } from '../../../../test/support/icc-writer';
import { type ColourProfile, toSrgb } from './index';

const cicp = (primaries: number, transfer: number): ColourProfile => ({ kind: 'cicp', primaries, transfer });

/** One pixel through `toSrgb`. */
function convert(profile: ColourProfile, rgb: number[], alpha = 255): number[] {
  return [...toSrgb({ data: new Uint8Array([...rgb, alpha]), width: 1, height: 1 }, profile).data];
}

const encode = (v: number) => Math.round(255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055));
/** Published linear-light matrices: Display P3 -> sRGB, and BT.709/sRGB -> BT.2020 (ITU-R BT.2087). */
const BT709_TO_BT2020 = [0.6274, 0.3293, 0.0433, 0.0691, 0.9195, 0.0114, 0.0164, 0.088, 0.8956];

describe('toSrgb with CICP code points (AVIF nclx, PNG cICP)', () => {
  it('converts Display P3 (12/13): primaries clip, grey and white stay', () => {
    expectDisplayP3ToSrgb((rgb, alpha) => convert(cicp(12, 13), rgb, alpha));
  });

  it('converts BT.2020 (9/13, and the BT.2020 OETF 9/14 read as sRGB) back to the sRGB colours it holds', () => {
    for (const transfer of [13, 14, 15, 1]) {
      expect(convert(cicp(9, transfer), [0, 255, 0])).toEqual([0, 255, 0, 255]); // BT.2020 green is outside sRGB
      for (const srgb of [[0, 255, 0], [255, 0, 0], [200, 100, 50], [60, 180, 220], [128, 128, 128]]) {
        const bt2020 = multiply3(BT709_TO_BT2020, srgb.map(linearFromSrgb8)).map(encode);
        // Two 8-bit roundings in a wider gamut: near black a level there is up to two here.
        expectClose(convert(cicp(9, transfer), bt2020), srgb, 2);
      }
    }
  });

  it('adapts the DCI-P3 white (11) to sRGB white and converts the older TV primaries (4-7)', () => {
    expect(convert(cicp(11, 13), [255, 255, 255])).toEqual([255, 255, 255, 255]);
    expect(convert(cicp(11, 13), [255, 0, 0])).toEqual([255, 0, 0, 255]);
    expect(convert(cicp(4, 13), [255, 255, 255])).toEqual([255, 255, 255, 255]);
    for (const primaries of [4, 5, 6, 7, 8, 22]) {
      const [r, g, b] = convert(cicp(primaries, 13), [90, 150, 60]);
      expect(Math.abs(r - 90) + Math.abs(g - 150) + Math.abs(b - 60), `primaries ${primaries}`).toBeGreaterThan(0);
      expect(convert(cicp(primaries, 13), [100, 100, 100]), `primaries ${primaries}`).toEqual([100, 100, 100, 255]);
    }
  });

  it('applies the gamma 2.2 (4), gamma 2.8 (5) and linear (8) transfers, also with BT.709 primaries', () => {
    for (const [transfer, linear] of [[4, (v: number) => (v / 255) ** 2.2], [5, (v: number) => (v / 255) ** 2.8], [8, (v: number) => v / 255]] as const) {
      for (const v of [0, 1, 64, 128, 200, 255]) {
        const [expected] = srgb8FromLinear([linear(v)]);
        expect(convert(cicp(1, transfer), [v, v, v], 99), `transfer ${transfer}, ${v}`).toEqual([expected, expected, expected, 99]);
        expect(convert(cicp(12, transfer), [v, v, v]), `P3, transfer ${transfer}, ${v}`).toEqual([expected, expected, expected, 255]);
      }
    }
  });

  it('leaves sRGB (1 or 2 with an sRGB-like transfer), HDR (PQ 16, HLG 18) and unknown code points alone: same object, same bytes', () => {
    const data = Uint8Array.from({ length: 64 * 4 }, (_, i) => (i * 37) & 0xff);
    const untouched = [[1, 13], [2, 13], [1, 1], [1, 6], [2, 2], [1, 2], [12, 16], [9, 16], [9, 18], [1, 16], [3, 13], [10, 17], [12, 3], [12, 0], [0, 0]];
    for (const [primaries, transfer] of untouched) {
      const image = { data: data.slice(), width: 8, height: 8 };
      expect(toSrgb(image, cicp(primaries, transfer)), `${primaries}/${transfer}`).toBe(image);
      expect(image.data, `${primaries}/${transfer}`).toEqual(data);
    }
  });

  it('converts a CMYK image with its default profile (CICP describes RGB only)', () => {
    const out = toSrgb({ colorModel: 'cmyk', data: new Uint8Array([0, 0, 0, 0]), width: 1, height: 1 }, cicp(12, 13));
    expect(out.data.length).toBe(4);
    expect('colorModel' in out).toBe(false);
  });
});
