import { clamp } from './fit';
import type { MemoryMeter } from './memory-meter';
import type { Region } from './operations';
import { decode, working } from './decoding';
import { shrinkOnLoad, shrunkSize, smartCropSize, type ProcessingPlan } from './plan';
import { ATTENTION_SIDE, attentionCrop, entropyCrop } from './smart-crop';
import { toSrgbRows, type ColourProfile } from './stages/colour';
import { flattenOnto, flattenRows } from './stages/flatten';
import { applyOrientation, storedRegion } from './stages/orient';
import { resize, resizeRows } from './stages/resize';
import type { RowSource } from './stages/rows';
import type { SmartPlan } from './steps/index';
import type { Dimensions, RgbaImage } from './types';

/** Premultiplying before scoring, as libvips does, puts transparent pixels on black. */
const BLACK = { r: 0, g: 0, b: 0, a: 255 };

/**
 * The cut of a smart crop whose resized picture is held whole (plan.ts holdsPicture): it is scored
 * itself, as libvips' smartcrop scores the resized picture. Returns the cut in stored orientation.
 */
export function smartCutOf(smart: SmartPlan, plan: ProcessingPlan, picture: RgbaImage, meter: MemoryMeter): Promise<Region> {
  const carriesAlpha = plan.alpha && !plan.flatten;
  return smartCut(smart, picture, meter, async (size) => {
    const copy = resize(picture, size.width, size.height);
    if (carriesAlpha) flattenOnto(new Uint8Array(copy.data.buffer, copy.data.byteOffset, copy.data.length), BLACK);
    return copy;
  });
}

/**
 * The first pass of a smart crop of a larger picture: the upload (still in memory) decoded again at
 * the largest shrink-on-load that leaves the reduced picture, resized to it and collected, and
 * scored. Attention collects only its 32x32 reduction; entropy the resized picture reduced to
 * SMART_CROP_MAX_PIXELS. Returns the cut for the second pass, in stored orientation.
 */
export function findSmartCut(smart: SmartPlan, resized: Dimensions, plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter): Promise<Region> {
  return smartCut(smart, resized, meter, (size) => reducedPicture(plan, profile, meter, size));
}

/** Scores `picture(size)` (the resized picture at `size`, stored orientation) turned upright, as libvips' smartcrop. */
async function smartCut(smart: SmartPlan, resized: Dimensions, meter: MemoryMeter, picture: (size: Dimensions) => Promise<RgbaImage>): Promise<Region> {
  const { orientation } = smart;
  const displayed = orientation >= 5 ? { width: resized.height, height: resized.width } : resized;
  const { box } = smart;
  const upright = async (size: Dimensions) => {
    const reduced = await picture(size);
    const image = applyOrientation(reduced, orientation);
    meter.sample(reduced.data.byteLength + (image === reduced ? 0 : image.data.byteLength));
    return image;
  };
  let at: { x: number; y: number };
  if (smart.strategy === 'attention') {
    at = attentionCrop(await upright({ width: ATTENTION_SIDE, height: ATTENTION_SIDE }), displayed, box);
  } else {
    const image = await upright(smartCropSize(resized));
    const sx = image.width / displayed.width;
    const sy = image.height / displayed.height;
    const reducedBox = { width: clamp(Math.round(box.width * sx), 1, image.width), height: clamp(Math.round(box.height * sy), 1, image.height) };
    const found = entropyCrop(image, reducedBox);
    at = { x: Math.round(found.x / sx), y: Math.round(found.y / sy) };
  }
  const region = { x: clamp(at.x, 0, displayed.width - box.width), y: clamp(at.y, 0, displayed.height - box.height), ...box };
  return storedRegion(region, orientation, resized);
}

/** The picture the first stage resizes (the file, or the stored region of the leading crops), decoded again at `size`. */
async function reducedPicture(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, size: Dimensions): Promise<RgbaImage> {
  const { file, stored } = plan;
  const { region } = plan.decode;
  // The region is in the coordinates of the run's own scaled decode.
  const shrink = region ? plan.decode.shrink : shrinkOnLoad(file.format.shrinkFactors, stored, size);
  const decoded = region ? { width: region.width, height: region.height } : shrunkSize(stored, shrink);
  let source = working(await decode(file, { shrink, region, lowMemory: plan.decode.lowMemory }, decoded), file.format.work.decode * shrink * shrink);
  source = toSrgbRows(source, profile);
  source = flattenRows(source, plan.flatten ? plan.background : BLACK);
  // A crop decoded at a shrink may show a part of the decoded pixels (plan.ts shrinkCropOnLoad).
  const first = plan.stages[0];
  const shown = region && first?.kind === 'resize' ? (first.shown ?? null) : null;
  if (shown || decoded.width !== size.width || decoded.height !== size.height) source = resizeRows(source, size.width, size.height, null, shown);
  return collectPicture(source, meter);
}

/** Reads `source` to its end into one picture, counting what it holds meanwhile; closes it. */
export async function collectPicture(source: RowSource, meter: MemoryMeter): Promise<RgbaImage & { data: Uint8Array }> {
  const { width, height } = source;
  const data = new Uint8Array(width * height * 4);
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      data.set(band.data.subarray(0, band.rows * width * 4), band.y * width * 4);
      meter.sample(source.heldBytes() + data.byteLength);
    }
  } finally {
    source.close();
  }
  return { data, width, height };
}
