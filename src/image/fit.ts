import { invalidParameter } from '../errors';
import { CENTER, type Fit, type Gravity, type Position, type Region, type ResizeOptions } from './operations';
import type { Dimensions } from './types';

/*
 * Where a resize puts the picture, in the frame a viewer sees (after EXIF orientation and the steps
 * before it): the picture is resized to `resized`, then `cover` cuts `crop` out of it and `contain`
 * places it at `pad` in the width x height box. A side that follows the aspect ratio is the exact
 * ratio rounded to the nearest pixel, whatever the format and however the decoder shrinks on load;
 * the kept regions are placed as sharp places them.
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
  return request.fit ?? (request.keepAspectRatio === false ? 'fill' : 'inside');
}

export function fitGeometry(displayed: Dimensions, request: ResizeOptions, field: (name: string) => string = (name) => name): FitGeometry {
  const fit = fitOf(request);
  const { width, height } = request;
  const position = request.position ?? CENTER;
  const none = { crop: null, pad: null, smart: null };
  if (width === undefined || height === undefined) {
    if (fit === 'cover' || fit === 'contain') throw invalidParameter(field(width === undefined ? 'width' : 'height'), `fit=${fit} needs both width and height`);
    const size = exactSize(displayed, { width, height }, 'inside');
    return { resized: size, output: size, ...none };
  }
  const box = { width, height };
  switch (fit) {
    case 'inside':
    case 'fill':
    case 'outside': {
      const size = exactSize(displayed, box, fit);
      return { resized: size, output: size, ...none };
    }
    case 'cover': {
      const resized = atLeast(exactSize(displayed, box, 'outside'), box);
      if (position.kind === 'smart') return { resized, output: box, crop: null, pad: null, smart: position.strategy };
      return { resized, output: box, crop: cropRegion(resized, box, position), pad: null, smart: null };
    }
    case 'contain': {
      const resized = exactSize(displayed, box, 'inside');
      if (position.kind !== 'gravity') throw invalidParameter(field('position'), 'fit=contain places the picture by center or a compass side (north, southeast, ...); entropy, attention and focal points choose what cover keeps');
      return { resized, output: box, crop: null, pad: embedRegion(resized, box, position.gravity), smart: null };
    }
  }
}

const atLeast = (size: Dimensions, box: Dimensions): Dimensions => ({ width: Math.max(size.width, box.width), height: Math.max(size.height, box.height) });

/**
 * The size the picture is resized to: `box` sides left out, and with `inside` and `outside` the side
 * that does not touch the box, follow the aspect ratio exactly, rounded to the nearest pixel (half
 * up) and at least 1. sharp is a pixel short where its JPEG shrink-on-load rounds the loaded size
 * down (a 600x450 JPEG to height 90 is 121x90 there, 120x90 here: docs/decisions.md).
 */
export function exactSize(picture: Dimensions, box: { width?: number; height?: number }, fit: 'inside' | 'outside' | 'fill'): Dimensions {
  const { width, height } = picture;
  if (box.width === undefined) return { width: ratioSide(width, box.height!, height), height: box.height! };
  if (box.height === undefined) return { width: box.width, height: ratioSide(height, box.width, width) };
  if (fit === 'fill') return { width: box.width, height: box.height };
  // Integers compared crosswise: width / box.width against height / box.height, with no rounding.
  const widthLimits = fit === 'inside' ? width * box.height >= height * box.width : width * box.height <= height * box.width;
  return widthLimits ? { width: box.width, height: ratioSide(height, box.width, width) } : { width: ratioSide(width, box.height, height), height: box.height };
}

/** side * target / reference rounded half up, at least 1, in integers (exact for every size there is). */
function ratioSide(side: number, target: number, reference: number): number {
  return Math.max(1, Math.floor((2 * side * target + reference) / (2 * reference)));
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
