import { invalidParameter } from '../errors';
import { CENTER, type Fit, type Gravity, type Position, type Region, type ResizeOptions } from './operations';
import type { Dimensions } from './types';

/*
 * Where a resize puts the picture, in the frame a viewer sees (after EXIF orientation), with
 * sharp's arithmetic so that sizes and kept regions match it: the picture is resized to `resized`,
 * then `cover` cuts `crop` out of it and `contain` places it at `pad` in the width x height box.
 */
export interface FitGeometry {
  /** The size the picture is resized to. */
  resized: Dimensions;
  /** The size of the result. */
  output: Dimensions;
  /** cover: the part of the resized picture kept; null for a smart position (found by looking) or no cut. */
  crop: Region | null;
  /** contain: where the resized picture sits in the output box. */
  pad: Region | null;
  /** cover with entropy or attention: the crop is chosen from the pixels (smart-crop.ts). */
  smart: 'entropy' | 'attention' | null;
}

/** `fit`, or the contract's keep_aspect_ratio where it is absent. */
export function fitOf(request: ResizeOptions): Fit {
  return request.fit ?? (request.keepAspectRatio ? 'inside' : 'fill');
}

export function fitGeometry(displayed: Dimensions, request: ResizeOptions, dctScaling: boolean): FitGeometry {
  const fit = fitOf(request);
  const { width, height } = request;
  const position = request.position ?? CENTER;
  const none = { crop: null, pad: null, smart: null };
  if (width === undefined || height === undefined) {
    if (fit === 'cover' || fit === 'contain') throw invalidParameter(width === undefined ? 'width' : 'height', `fit=${fit} needs both width and height`);
    const size = sharpSize(displayed, { width, height }, 'inside', dctScaling);
    return { resized: size, output: size, ...none };
  }
  const box = { width, height };
  switch (fit) {
    case 'inside':
    case 'fill':
    case 'outside': {
      const size = sharpSize(displayed, box, fit, dctScaling);
      return { resized: size, output: size, ...none };
    }
    case 'cover': {
      const resized = atLeast(sharpSize(displayed, box, 'outside', dctScaling), box);
      if (position.kind === 'smart') return { resized, output: box, crop: null, pad: null, smart: position.strategy };
      return { resized, output: box, crop: cropRegion(resized, box, position), pad: null, smart: null };
    }
    case 'contain': {
      const resized = sharpSize(displayed, box, 'inside', dctScaling);
      if (position.kind !== 'gravity') throw invalidParameter('position', 'fit=contain places the picture by center or a compass side (north, southeast, ...); entropy, attention and focal points choose what cover keeps');
      return { resized, output: box, crop: null, pad: embedRegion(resized, box, position.gravity), smart: null };
    }
  }
}

const atLeast = (size: Dimensions, box: Dimensions): Dimensions => ({ width: Math.max(size.width, box.width), height: Math.max(size.height, box.height) });

/**
 * The size sharp resizes to, computed as sharp (ResolveShrink, its JPEG shrink-on-load choice)
 * and libvips (jpegload's rounded-down scaled size, vips_reduce's rounding) compute it, so that
 * results have sharp's size to the pixel. It can differ by one from the exact ratio: a 450x600
 * JPEG into 333x77 is 57x77, not 58x77. `box` sides left out follow the aspect ratio.
 */
function sharpSize(picture: Dimensions, box: { width?: number; height?: number }, fit: 'inside' | 'outside' | 'fill', dctScaling: boolean): Dimensions {
  const shrinks = ({ width, height }: Dimensions): [number, number] => {
    let h = box.width !== undefined ? width / box.width : height / box.height!;
    let v = box.height !== undefined ? height / box.height : h;
    if (box.width === undefined) h = v;
    if (box.width !== undefined && box.height !== undefined && fit !== 'fill') h = v = fit === 'inside' ? Math.max(h, v) : Math.min(h, v);
    return [Math.min(h, width), Math.min(v, height)];
  };
  const onLoad = dctScaling ? jpegShrinkOnLoad(Math.min(...shrinks(picture))) : 1;
  const loaded = { width: Math.floor(picture.width / onLoad), height: Math.floor(picture.height / onLoad) };
  const [h, v] = shrinks(loaded);
  return { width: scaledSide(loaded.width, h), height: scaledSide(loaded.height, v) };
}

/** sharp's JPEG shrink-on-load (fastShrinkOnLoad), one step less where libjpeg would round badly. */
function jpegShrinkOnLoad(shrink: number): number {
  let factor = shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1;
  if (factor > 1 && Math.trunc(shrink) === factor) factor /= 2;
  return factor;
}

/** vips_resize: reduce rounds in->Xsize / (1 / (1 / shrink)) half up; enlarging rounds the scaled side. */
function scaledSide(side: number, shrink: number): number {
  if (shrink > 1) return Math.max(1, Math.floor(side / (1 / (1 / shrink)) + 0.5));
  if (shrink === 1) return side;
  return Math.round(side / shrink);
}

/** Offsets of a gravity as fractions of the free space: 0 left/top, 1 right/bottom, 0.5 centre. */
const GRAVITY_SIDES: Record<Gravity, [number, number]> = {
  center: [0.5, 0.5],
  north: [0.5, 0],
  northeast: [1, 0],
  east: [1, 0.5],
  southeast: [1, 1],
  south: [0.5, 1],
  southwest: [0, 1],
  west: [0, 0.5],
  northwest: [0, 0],
};

/** sharp's CalculateCrop: a centred cut rounds its offset up ((free + 1) / 2). */
function cropRegion(resized: Dimensions, box: Dimensions, position: Exclude<Position, { kind: 'smart' }>): Region {
  const freeX = resized.width - box.width;
  const freeY = resized.height - box.height;
  if (position.kind === 'focal') {
    return {
      x: clamp(Math.round(position.x * resized.width) - Math.floor(box.width / 2), 0, freeX),
      y: clamp(Math.round(position.y * resized.height) - Math.floor(box.height / 2), 0, freeY),
      ...box,
    };
  }
  const [sx, sy] = GRAVITY_SIDES[position.gravity];
  const offset = (free: number, side: number) => (side === 0.5 ? Math.floor((free + 1) / 2) : side * free);
  return { x: offset(freeX, sx), y: offset(freeY, sy), ...box };
}

/** sharp's CalculateEmbedPosition: a centred picture rounds its offset down (free / 2). */
function embedRegion(resized: Dimensions, box: Dimensions, gravity: Gravity): Region {
  const [sx, sy] = GRAVITY_SIDES[gravity];
  const offset = (free: number, side: number) => Math.floor(side * free);
  return { x: offset(box.width - resized.width, sx), y: offset(box.height - resized.height, sy), ...resized };
}

export function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}
