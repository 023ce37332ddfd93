import { clamp } from './fit';
import type { MemoryMeter } from './memory-meter';
import type { Region } from './operations';
import { decode } from './pipeline';
import { shrinkOnLoad, shrunkSize, smartCropSize, type ProcessingPlan } from './plan';
import { smartCrop } from './smart-crop';
import { toSrgbRows, type ColourProfile } from './stages/colour';
import { flattenRows } from './stages/flatten';
import { applyOrientation, storedRegion } from './stages/orient';
import { resizeRows } from './stages/resize';
import type { Dimensions, RgbaImage } from './types';

/** Premultiplying before scoring, as libvips does, puts transparent pixels on black. */
const BLACK = { r: 0, g: 0, b: 0, a: 255 };

/**
 * The first pass of a smart crop: the upload (still in memory) decoded again at the largest
 * shrink-on-load that leaves the reduced picture, resized to it and collected (at most
 * SMART_CROP_MAX_PIXELS), turned upright, and scored as libvips' smartcrop scores the resized
 * picture. Returns the cut for the second pass, in stored orientation. For the usual thumbnail
 * the reduced picture is the resized picture itself, so the choice is libvips' exactly.
 */
export async function findSmartCut(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter): Promise<Region> {
  const { smart, orientation } = plan;
  if (!smart) throw new Error('findSmartCut: the plan has no smart crop');
  const resized = plan.resize ?? plan.decoded;
  const reduced = await reducedPicture(plan, profile, meter, smartCropSize(resized));
  const upright = applyOrientation(reduced, orientation);
  meter.sample(reduced.data.byteLength + upright.data.byteLength);
  const displayed = orientation >= 5 ? { width: resized.height, height: resized.width } : resized;
  const { box } = smart;
  const sx = upright.width / displayed.width;
  const sy = upright.height / displayed.height;
  const reducedBox = {
    width: clamp(Math.round(box.width * sx), 1, upright.width),
    height: clamp(Math.round(box.height * sy), 1, upright.height),
  };
  const at = smartCrop(upright, reducedBox, smart.strategy);
  const region = {
    x: clamp(Math.round(at.x / sx), 0, displayed.width - box.width),
    y: clamp(Math.round(at.y / sy), 0, displayed.height - box.height),
    ...box,
  };
  return storedRegion(region, orientation, resized);
}

async function reducedPicture(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, size: Dimensions): Promise<RgbaImage> {
  const { file, stored } = plan;
  const shrink = shrinkOnLoad(file.format.shrinkFactors, stored, size);
  const decoded = shrunkSize(stored, shrink);
  let source = await decode(file, { shrink, region: null }, decoded);
  source = toSrgbRows(source, profile);
  source = flattenRows(source, plan.flatten ? plan.background : BLACK);
  if (decoded.width !== size.width || decoded.height !== size.height) source = resizeRows(source, size.width, size.height);
  const data = new Uint8Array(size.width * size.height * 4);
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      data.set(band.data, band.y * size.width * 4);
      meter.sample(source.heldBytes() + data.byteLength);
    }
  } finally {
    source.close();
  }
  return { data, ...size };
}
