import { describe, expect, it } from 'vitest';
import { corpus } from '../../../../test/support/image-testing';
import {
  asIcc, ADOBE_RGB, DISPLAY_P3, expectClose, expectDisplayP3ToSrgb, greyProfile, iccProfile, lutAToBTag, multiply3, PROPHOTO, rgbProfile, SRGB, SRGB_TRC, srgb8FromLinear,
  srgb8FromXyzD50, xyzTag,
} from '../../../../test/support/icc-writer';
import { d50Colorants } from './colorimetry';
import { parseIccProfile } from './icc';
import { toSrgb } from './index';
import { readIccProfile } from '../../../../test/support/formats';
import { isSrgbMatrixShaper, readMatrixShaper } from './matrix-shaper';

/** One pixel through `toSrgb`. */
function convert(profile: Uint8Array | null, rgb: number[], alpha = 255): number[] {
  const image = { data: new Uint8Array([...rgb, alpha]), width: 1, height: 1 };
  return [...toSrgb(image, asIcc(profile)).data];
}

/** Published linear-light conversion matrices to linear sRGB. */
const ADOBE_TO_SRGB = [1.3982832, -0.3982831, 0, 0, 1, 0, 0, -0.0429383, 1.0429383];
const PROPHOTO_TO_XYZ_D50 = [0.7976749, 0.1351917, 0.0313534, 0.2880402, 0.7118741, 0.0000857, 0, 0, 0.82521];

describe('toSrgb with RGB matrix/TRC profiles', () => {
  it('leaves sRGB-profiled pixels untouched: same object, same bytes', () => {
    const data = Uint8Array.from({ length: 64 * 4 }, (_, i) => (i * 37) & 0xff);
    for (const profile of [rgbProfile(SRGB, SRGB_TRC), rgbProfile(SRGB, SRGB_TRC, 2), null]) {
      const image = { data: data.slice(), width: 8, height: 8 };
      expect(toSrgb(image, asIcc(profile))).toBe(image);
      expect(image.data).toEqual(data);
    }
  });

  it('detects the corpus photos\' and the HP sRGB profile as sRGB, and Apple Generic RGB as not', async () => {
    const shaper = async (path: string) => {
      const profile = await readIccProfile('jpeg', await corpus(path));
      expect(profile, path).not.toBeNull();
      return readMatrixShaper(parseIccProfile(profile!)!)!;
    };
    expect(isSrgbMatrixShaper(await shaper('photos/photo-1mp.jpg'))).toBe(true);
    expect(isSrgbMatrixShaper(await shaper('jpeg/camera/Canon_40D.jpg'))).toBe(true);
    expect(isSrgbMatrixShaper(await shaper('jpeg/orientation/landscape_2.jpg'))).toBe(false);
    const photo = await readIccProfile('jpeg', await corpus('photos/photo-1mp.jpg'));
    expect(convert(photo, [12, 200, 99])).toEqual([12, 200, 99, 255]);
  });

  it('clips Display P3 primaries to the sRGB primaries and keeps grey grey', () => {
    const p3 = rgbProfile(DISPLAY_P3, SRGB_TRC);
    // P3 red is linear sRGB (1.2249, -0.0420, -0.0196), green (-0.2247, 1.0419, -0.0786): both clip.
    expectDisplayP3ToSrgb((rgb, alpha) => convert(p3, rgb, alpha));
  });

  it('converts Adobe RGB (gamma 563/256): mid-grey, primaries, a mixed colour', () => {
    const adobe = rgbProfile(ADOBE_RGB, { gamma: 563 / 256 });
    const linear = (rgb: number[]) => rgb.map((v) => (v / 255) ** (563 / 256));
    expect(convert(adobe, [128, 128, 128])).toEqual([...srgb8FromLinear(linear([128, 128, 128])), 255]);
    expect(convert(adobe, [255, 0, 0])).toEqual([255, 0, 0, 255]);
    expect(convert(adobe, [0, 255, 0])).toEqual([0, 255, 0, 255]);
    expect(convert(adobe, [0, 0, 255])).toEqual([0, 0, 255, 255]);
    for (const rgb of [[100, 150, 200], [200, 120, 80], [30, 40, 50]]) {
      expectClose(convert(adobe, rgb), srgb8FromLinear(multiply3(ADOBE_TO_SRGB, linear(rgb))));
    }
  });

  it('converts ProPhoto RGB (gamma 1.8, D50 white)', () => {
    const prophoto = rgbProfile(PROPHOTO, { gamma: 1.8 });
    for (const rgb of [[128, 128, 128], [180, 120, 60], [90, 160, 110], [255, 255, 255], [0, 0, 0]]) {
      const xyz = multiply3(PROPHOTO_TO_XYZ_D50, rgb.map((v) => (v / 255) ** 1.8));
      expectClose(convert(prophoto, rgb), srgb8FromXyzD50(xyz));
    }
  });

  it('converts a mAB (XYZ PCS) profile like the equivalent matrix/TRC profile', () => {
    const m = d50Colorants(DISPLAY_P3).map((v) => (v * 32768) / 65535); // PCSXYZ: 0x8000 is 1.0
    const lut = lutAToBTag({ inputs: 3, b: ['identity', 'identity', 'identity'], matrix: [...m, 0, 0, 0], m: [SRGB_TRC, SRGB_TRC, SRGB_TRC] });
    const mab = iccProfile({ colorSpace: 'RGB ', tags: [['wtpt', xyzTag([0.9642, 1, 0.8249])], ['A2B0', lut]] });
    const matrix = rgbProfile(DISPLAY_P3, SRGB_TRC);
    const data = Uint8Array.from({ length: 4096 * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 2654435761) >>> 24));
    const viaLut = toSrgb({ data: data.slice(), width: 64, height: 64 }, asIcc(mab)).data;
    const viaMatrix = toSrgb({ data: data.slice(), width: 64, height: 64 }, asIcc(matrix)).data;
    let worst = 0;
    for (let i = 0; i < data.length; i++) worst = Math.max(worst, Math.abs(viaLut[i] - viaMatrix[i]));
    expect(worst).toBeLessThanOrEqual(1);
  });
});

describe('toSrgb with grey profiles', () => {
  it('ignores a grey profile on a colour image (a mislabel), keeping its colours', () => {
    const image = { data: new Uint8Array([200, 40, 30, 255, 90, 90, 90, 255]), width: 2, height: 1 };
    expect([...toSrgb(image, asIcc(greyProfile({ gamma: 1.8 }))).data]).toEqual([200, 40, 30, 255, 90, 90, 90, 255]);
  });

  it('maps a gamma 1.8 grey through its curve into sRGB grey', () => {
    for (const pcs of ['XYZ ', 'Lab '] as const) {
      const grey = greyProfile(pcs === 'XYZ ' ? { gamma: 1.8 } : 'identity', pcs);
      for (const v of [0, 1, 64, 128, 200, 255]) {
        const y = pcs === 'XYZ ' ? (v / 255) ** 1.8 : labLightnessToY((100 * v) / 255);
        const [expected] = srgb8FromLinear([y]);
        expect(convert(grey, [v, v, v], 99), `${pcs} ${v}`).toEqual([expected, expected, expected, 99]);
      }
    }
  });

  it('leaves grey with the sRGB curve untouched', () => {
    const image = { data: new Uint8Array([5, 5, 5, 255, 77, 77, 77, 0]), width: 2, height: 1 };
    expect(toSrgb(image, asIcc(greyProfile(SRGB_TRC)))).toBe(image);
    expect([...image.data]).toEqual([5, 5, 5, 255, 77, 77, 77, 0]);
  });
});

function labLightnessToY(l: number): number {
  const fy = (l + 16) / 116;
  return fy > 6 / 29 ? fy ** 3 : 3 * (6 / 29) ** 2 * (fy - 4 / 29);
}
