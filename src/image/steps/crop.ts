import { invalidParameter } from '../../errors';
import type { Region } from '../operations';
import { displayedSize, storedRegion } from '../stages/orient';
import type { Dimensions } from '../types';
import type { Frame, StagePlan, StepNames } from './index';

/**
 * A crop of the picture as it stands, refused from the header when it is empty or leaves the picture
 * (decisions.md), with the picture's size in the message; the stage cuts the stored pixels it shows.
 */
export function planCrop({ x, y, width, height }: Region, frame: Frame, names: StepNames): { stage: StagePlan; frame: Frame } {
  const region = { x, y, width, height };
  checkRegion(region, displayedSize(frame.size, frame.orientation), names);
  const stored = storedRegion(region, frame.orientation, frame.size);
  return { stage: { kind: 'crop', region: stored }, frame: { ...frame, size: { width: stored.width, height: stored.height } } };
}

function checkRegion({ x, y, width, height }: Region, picture: Dimensions, names: StepNames): void {
  const field =
    width === 0 ? 'width'
    : height === 0 ? 'height'
    : x >= picture.width ? 'x'
    : y >= picture.height ? 'y'
    : x + width > picture.width ? 'width'
    : y + height > picture.height ? 'height'
    : null;
  if (field === null) return;
  const problem = width === 0 || height === 0 ? 'the crop region is empty' : 'the crop region lies outside the image';
  throw invalidParameter(
    names.field(field),
    `${problem}; ${names.picture(picture)}, so x + width must be at most ${picture.width} and y + height at most ${picture.height}`,
  );
}
