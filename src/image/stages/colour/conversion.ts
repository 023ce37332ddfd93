import { cmykLutConverter, greyLutConverter, rgbLutConverter } from './device-table';
import { type IccProfile, readable } from './icc';
import { type DeviceToPcs, readAToB } from './icc-lut';
import {
  greyTable, isSrgbMatrixShaper, matrixShaperConverter, perChannelConverter, type PixelConverter, readMatrixShaper,
} from './matrix-shaper';

/**
 * Picks the conversion for a parsed profile, reading its tags on demand. `null` means "leave the
 * pixels alone": the profile is effectively sRGB, or unusable (a malformed tag is treated like no
 * profile, as browsers do).
 */
export function rgbConversion(profile: IccProfile): PixelConverter | null {
  return readable(() => {
    if (profile.colorSpace === 'RGB ') {
      const shaper = readMatrixShaper(profile);
      if (shaper && isSrgbMatrixShaper(shaper)) return null;
      // lcms prefers the perceptual AToB table when there is one, then the matrix/TRC.
      const perceptual = aToB(profile, ['A2B0'], 3);
      if (perceptual) return rgbLutConverter(perceptual);
      if (shaper) return matrixShaperConverter(shaper);
      const other = aToB(profile, ['A2B1', 'A2B2'], 3);
      return other && rgbLutConverter(other);
    }
    if (profile.colorSpace === 'GRAY') {
      const perceptual = aToB(profile, ['A2B0'], 1);
      if (perceptual) return greyLutConverter(perceptual);
      const table = greyTable(profile);
      if (table === 'srgb') return null;
      if (table) return perChannelConverter(table);
      const other = aToB(profile, ['A2B1', 'A2B2'], 1);
      return other && greyLutConverter(other);
    }
    return null;
  });
}

/** CMYK ink amounts -> sRGB RGBA in place, or null when the profile has no usable CMYK AToB table. */
export function cmykConversion(profile: IccProfile): ((cmyk: Uint8Array) => void) | null {
  if (profile.colorSpace !== 'CMYK') return null;
  return readable(() => {
    const lut = aToB(profile, ['A2B0', 'A2B1', 'A2B2'], 4);
    return lut && cmykLutConverter(lut);
  });
}

/** The first present tag of `signatures` as an AToB table with `inputs` inputs; throws `damaged` if malformed. */
function aToB(profile: IccProfile, signatures: string[], inputs: number): DeviceToPcs | null {
  for (const signature of signatures) {
    const tag = profile.tags.get(signature);
    if (!tag) continue;
    const lut = readAToB(tag, profile.pcs);
    if (lut.inputs !== inputs) return null;
    return lut;
  }
  return null;
}
