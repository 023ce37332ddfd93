import type { ColourDescription } from '../../header';
import { forward, type RowSource } from '../rows';
import { isCmyk, type DecodedImage, type RgbaImage } from '../../types';
import { cicpConversion, understoodCicp } from './cicp';
import { cmykConversion, rgbConversion } from './conversion';
import defaultCmykProfileBytes from './default-cmyk.icc';
import { parseIccProfile } from './icc';
import { inflateProfile } from './inflate-profile';

/**
 * Colour management: pixels leave the pipeline as sRGB. The header's colour description
 * (header.ts) rules how: the decoded pixels are converted relative colorimetric (PCS D50 -> sRGB D65 by
 * Bradford, as lcms does), the input side through the perceptual AToB table when there is one.
 * Files that describe their colour with code points instead (AVIF `nclx`, PNG `cICP`) are converted
 * the same way, through a matrix/TRC built from the H.273 primaries and transfer (cicp.ts).
 */

/** The colour the pixels are in: an ICC profile, or H.273 code points (AVIF `nclx`, PNG `cICP`). */
export type ColourProfile = { kind: 'icc'; bytes: Uint8Array } | { kind: 'cicp'; primaries: number; transfer: number };

/** Profiles up to this size are copied out of the file: every usual one (sRGB 3 KB, camera and printer profiles up to a few hundred KB). */
const ICC_COPY_MAX = 1 << 20;

function copiedProfile(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength <= ICC_COPY_MAX ? bytes.slice() : bytes;
}

/** Whether the profile readColourProfile may take stays a view of the file (an ICC profile too large to copy). */
export function profileStaysInFile(descriptions: readonly ColourDescription[]): boolean {
  return descriptions.some((description) => description.kind === 'icc' && description.bytes.byteLength > ICC_COPY_MAX);
}

/**
 * The one colour description that rules, from the header's in their order: an ICC profile that can
 * be read (PNG's inflated, within MAX_INFLATED_PROFILE), or code points. Code points this stage
 * cannot convert (reserved or unsupported) yield to a later description (PNG 3rd edition: cICP
 * wins over iCCP unless it is unusable), and are used only when nothing else is there. Null: none.
 */
export async function readColourProfile(descriptions: readonly ColourDescription[]): Promise<ColourProfile | null> {
  let unusable: ColourProfile | null = null;
  for (const description of descriptions) {
    if (description.kind === 'cicp') {
      const cicp = { kind: 'cicp', primaries: description.primaries, transfer: description.transfer } as const;
      if (understoodCicp(cicp)) return cicp;
      unusable ??= cicp;
      continue;
    }
    // A profile read from the file is copied (up to ICC_COPY_MAX), so the run keeps no view of the file.
    const bytes = description.kind === 'icc' ? copiedProfile(description.bytes) : inflateProfile(description.bytes);
    if (bytes) return { kind: 'icc', bytes };
  }
  return unusable;
}

/**
 * sRGB pixels: converts RGB/grey input with a non-sRGB profile (in place allowed) and CMYK input
 * (always) to 8-bit sRGB RGBA.
 */
export function toSrgb(image: DecodedImage, profile: ColourProfile | null): RgbaImage {
  if (isCmyk(image)) {
    // CICP describes RGB only; a CMYK image (JPEG, which has no CICP) gets its usual default.
    const parsed = profile?.kind === 'icc' ? parseIccProfile(profile.bytes) : null;
    // The CMYK buffer becomes the RGBA buffer: both are 4 bytes per pixel.
    const convert = (parsed && cmykConversion(parsed)) ?? defaultCmykConversion();
    convert(image.data);
    return { data: image.data, width: image.width, height: image.height };
  }
  const conversion = rgbToSrgbConversion(profile);
  if (conversion.kind === 'convert') conversion.convert(image.data);
  // A grey profile describes grey pixels only; on a colour image it is a mislabel that lcms would
  // refuse and libvips ignores, so colours are kept rather than turned grey.
  if (conversion.kind === 'if-grey' && isGrey(image.data)) conversion.convert(image.data);
  return image;
}

/**
 * The colour stage: bands converted to sRGB in place, with a conversion built once per image.
 * CMYK inks always become sRGB RGBA (through the embedded CMYK profile, or libvips' default). A grey
 * profile applies only to a source that is grey by construction: on colour pixels it is a mislabel
 * that lcms would refuse and libvips ignores, so colours are kept rather than turned grey.
 */
export function toSrgbRows(source: RowSource, profile: ColourProfile | null): RowSource {
  const convert = source.model === 'cmyk' ? cmykToSrgb(profile) : rgbToSrgbRows(profile, source.grey);
  if (!convert) return source;
  return {
    ...forward(source),
    model: 'rgba',
    async read() {
      const band = await source.read();
      if (band) convert(band.data);
      return band;
    },
  };
}

function rgbToSrgbRows(profile: ColourProfile | null, grey: boolean): ((rgba: Uint8Array) => void) | null {
  const conversion = rgbToSrgbConversion(profile);
  if (conversion.kind === 'none' || (conversion.kind === 'if-grey' && !grey)) return null;
  return conversion.convert;
}

function cmykToSrgb(profile: ColourProfile | null): CmykConverter {
  // CICP describes RGB only; a CMYK image (JPEG, which has no CICP) gets its usual default.
  const parsed = profile?.kind === 'icc' ? parseIccProfile(profile.bytes) : null;
  return (parsed && cmykConversion(parsed)) ?? defaultCmykConversion();
}

/**
 * The in-place conversion of RGBA pixels to sRGB, built once per image so it can run band by band.
 * `if-grey`: a grey profile, which applies only if the whole image turns out to be grey.
 */
export type RgbToSrgb =
  | { kind: 'none' }
  | { kind: 'convert' | 'if-grey'; convert: (rgba: Uint8Array | Uint8ClampedArray) => void };

export function rgbToSrgbConversion(profile: ColourProfile | null): RgbToSrgb {
  if (profile?.kind === 'cicp') {
    const convert = cicpConversion(profile);
    return convert ? { kind: 'convert', convert } : { kind: 'none' };
  }
  const parsed = profile && parseIccProfile(profile.bytes);
  const convert = parsed && rgbConversion(parsed);
  if (!parsed || !convert) return { kind: 'none' };
  return { kind: parsed.colorSpace === 'GRAY' ? 'if-grey' : 'convert', convert };
}

function isGrey(rgba: ArrayLike<number>): boolean {
  for (let i = 0; i < rgba.length; i += 4) if (rgba[i] !== rgba[i + 1] || rgba[i + 1] !== rgba[i + 2]) return false;
  return true;
}

/** Converts CMYK ink amounts in place to sRGB RGBA. */
type CmykConverter = (cmyk: Uint8Array) => void;

let defaultCmyk: CmykConverter | undefined;

/**
 * A CMYK file without a usable profile is read with libvips' default CMYK profile (ArgyllCMS'
 * "Chemical proof", public domain; scripts/extract-default-cmyk-profile.ts), so it looks as it
 * does in libvips, sharp and imgproxy. Its conversion table is built once per isolate.
 */
function defaultCmykConversion(): CmykConverter {
  if (!defaultCmyk) {
    const profile = parseIccProfile(new Uint8Array(defaultCmykProfileBytes));
    defaultCmyk = (profile && cmykConversion(profile)) ?? undefined;
    if (!defaultCmyk) throw new Error('the bundled default CMYK profile is unusable');
  }
  return defaultCmyk;
}
