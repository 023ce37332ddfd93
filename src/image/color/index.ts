import { isCmyk, type DecodedImage, type ImageFormat, type RgbaImage } from '../types';
import { cmykConversion, rgbConversion, type PixelConversion } from './conversion';
import defaultCmykProfileBytes from './default-cmyk.icc';
import { embeddedProfile } from './embedded-profile';
import { parseIccProfile } from './icc';

/**
 * Colour management: pixels leave the pipeline as sRGB. The embedded profile is read from the
 * container and the decoded pixels are converted relative colorimetric (PCS D50 -> sRGB D65 by
 * Bradford, as lcms does), the input side through the perceptual AToB table when there is one.
 */

/** The embedded ICC profile of the primary image, or null (none, incomplete, or unreadable). Never throws for a bad profile container; only reads. */
export function readIccProfile(format: ImageFormat, bytes: Uint8Array): Promise<Uint8Array | null> {
  return embeddedProfile(format, bytes);
}

/** sRGB pixels: converts RGB/grey input with a non-sRGB profile (in place allowed) and CMYK input (always) to 8-bit sRGB RGBA. */
export function toSrgb(image: DecodedImage, profile: Uint8Array | null): RgbaImage {
  const parsed = profile && parseIccProfile(profile);
  if (isCmyk(image)) {
    // The CMYK buffer becomes the RGBA buffer: both are 4 bytes per pixel.
    const convert = (parsed && cmykConversion(parsed)) ?? defaultCmykConversion();
    convert(image.data);
    return { data: image.data, width: image.width, height: image.height };
  }
  const convert = parsed && rgbConversion(parsed);
  if (convert) convert(image.data);
  return image;
}

let defaultCmyk: PixelConversion | undefined;

/**
 * A CMYK file without a usable profile is read with libvips' default CMYK profile (ArgyllCMS'
 * "Chemical proof", public domain; scripts/extract-default-cmyk-profile.ts), so it looks as it
 * does in libvips, sharp and imgproxy. Its conversion table is built once per isolate.
 */
function defaultCmykConversion(): PixelConversion {
  if (!defaultCmyk) {
    const profile = parseIccProfile(new Uint8Array(defaultCmykProfileBytes));
    defaultCmyk = (profile && cmykConversion(profile)) ?? undefined;
    if (!defaultCmyk) throw new Error('the bundled default CMYK profile is unusable');
  }
  return defaultCmyk;
}
