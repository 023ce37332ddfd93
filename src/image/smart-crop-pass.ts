import { clamp } from './fit';
import type { MemoryMeter } from './memory-meter';
import type { Region } from './operations';
import { decode, working } from './decoding';
import { shrinkOnLoad, shrunkSize, smartCropSize, type ProcessingPlan } from './plan';
import { ATTENTION_SIDE, attentionCrop, entropyCrop } from './smart-crop';
import { toSrgbRows, type ColourProfile } from './stages/colour';
import { flattenRows } from './stages/flatten';
import { applyOrientation, storedRegion } from './stages/orient';
import { resizeRows } from './stages/resize';
import type { Dimensions, RgbaImage } from './types';

/** Premultiplying before scoring, as libvips does, puts transparent pixels on black. */
const BLACK = { r: 0, g: 0, b: 0, a: 255 };

/**
 * The first pass of a smart crop: the upload (still in memory) decoded again at the largest
 * shrink-on-load that leaves the reduced picture, resized to it and collected, turned upright,
 * and scored as libvips' smartcrop scores the resized picture. Attention collects only its 32x32
 * reduction; entropy the resized picture itself, reduced to SMART_CROP_MAX_PIXELS where larger
 * (for the usual thumbnail it is not, so the choice is libvips' exactly). Returns the cut for the
 * second pass, in stored orientation.
 */
export async function findSmartCut(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter): Promise<Region> {
  const { smart, orientation } = plan;
  if (!smart) throw new Error('findSmartCut: the plan has no smart crop');
  const resized = plan.resize ?? plan.decoded;
  const displayed = orientation >= 5 ? { width: resized.height, height: resized.width } : resized;
  const { box } = smart;
  const upright = async (size: Dimensions) => {
    const reduced = await reducedPicture(plan, profile, meter, size);
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

async function reducedPicture(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, size: Dimensions): Promise<RgbaImage> {
  const { file, stored } = plan;
  const shrink = shrinkOnLoad(file.format.shrinkFactors, stored, size);
  const decoded = shrunkSize(stored, shrink);
  let source = working(await decode(file, { shrink, region: null }, decoded), file.format.work.decode * shrink * shrink);
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
