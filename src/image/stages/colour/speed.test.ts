import { describe, expect, it } from 'vitest';
import { asIcc, DISPLAY_P3, iccProfile, legacyLab16, lut16Tag, rgbProfile, SRGB_TRC } from '../../../../test/support/icc-writer';
import { corpus, decodeJpeg } from '../../../../test/support/image-testing';
import { toSrgb } from './index';

const PIXELS = 4000 * 3000;

function noise(length: number): Uint8Array {
  const data = new Uint8Array(length);
  let seed = 12345;
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = seed >>> 24;
  }
  return data;
}

/** A 17-point CMYK lut16Type, the size real press profiles use. */
function pressProfile(): Uint8Array {
  const grid = 17;
  const clut: number[] = [];
  for (let node = 0; node < grid ** 4; node++) {
    const [c, m, y, k] = [3, 2, 1, 0].map((d) => Math.floor(node / grid ** d) % grid / (grid - 1));
    clut.push(...legacyLab16([Math.max(0, 100 - 50 * c - 40 * m - 10 * y - 80 * k), 60 * m - 30 * c, 75 * y - 45 * c]));
  }
  return iccProfile({ colorSpace: 'CMYK', pcs: 'Lab ', version: 2, tags: [['A2B0', lut16Tag(4, grid, clut)]] });
}

/** The corpus 12 MP photo as CMYK (naive separation with full grey replacement), for realistic coherence. */
async function photoAsCmyk(): Promise<Uint8Array> {
  const { data } = await decodeJpeg(await corpus('photos/photo-12mp.jpg'));
  const cmyk = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i += 4) {
    const k = 255 - Math.max(data[i], data[i + 1], data[i + 2]);
    cmyk[i] = 255 - data[i] - k;
    cmyk[i + 1] = 255 - data[i + 1] - k;
    cmyk[i + 2] = 255 - data[i + 2] - k;
    cmyk[i + 3] = k;
  }
  return cmyk;
}

describe('toSrgb speed (12 MP)', () => {
  it('converts RGB through a matrix/TRC profile and CMYK through a LUT profile in time', async () => {
    const time = (run: () => void) => {
      const start = performance.now();
      run();
      return performance.now() - start;
    };
    const rgb = { data: noise(PIXELS * 4), width: 4000, height: 3000 };
    const rgbMs = time(() => toSrgb(rgb, asIcc(rgbProfile(DISPLAY_P3, SRGB_TRC))));
    const profile = pressProfile();
    const noisy = { colorModel: 'cmyk' as const, data: noise(PIXELS * 4), width: 4000, height: 3000 };
    const noiseMs = time(() => toSrgb(noisy, asIcc(profile)));
    const photo = { colorModel: 'cmyk' as const, data: await photoAsCmyk(), width: 4000, height: 3000 };
    const photoMs = time(() => toSrgb(photo, asIcc(profile)));
    const setupMs = time(() => toSrgb({ colorModel: 'cmyk', data: noise(4), width: 1, height: 1 }, asIcc(profile)));
    console.log(
      `12 MP: RGB matrix/TRC ${rgbMs.toFixed(0)} ms; CMYK LUT photo ${photoMs.toFixed(0)} ms, noise ${noiseMs.toFixed(0)} ms (table setup ${setupMs.toFixed(0)} ms)`,
    );
    // Generous bounds: the machine running the suite may be busy.
    expect(rgbMs).toBeLessThan(3000);
    expect(photoMs).toBeLessThan(6000);
  }, 60_000);
});
