import { invalidParameter } from '../../errors';
import { fitGeometry, type FitGeometry } from '../fit';
import { assertWithinPixelLimit } from '../limits';
import type { ResizeOptions } from '../operations';
import { displayedSize, storedRegion } from '../stages/orient';
import type { Dimensions } from '../types';
import type { ChainContext, Frame, StagePlan, StepNames } from './index';

/** image-api.md: resize sides are 1 to 12000 pixels, also when one side follows the other. */
export const MAX_RESIZE_SIDE = 12_000;

/**
 * A resize of the picture as it stands (fit.ts: the size, cover's cut, contain's place), checked
 * from the header, in the stored orientation: sizes swapped, cut and place turned into the stored
 * pixels they show. A transparent contain background where the output keeps alpha makes the picture
 * carry alpha from here on.
 */
export function planResize(step: ResizeOptions, frame: Frame, names: StepNames, context: ChainContext): { stage: StagePlan; frame: Frame } {
  const { orientation } = frame;
  const geometry = checkedGeometry(step, displayedSize(frame.size, orientation), names, context);
  const stored = (size: Dimensions) => displayedSize(size, orientation);
  const to = stored(geometry.resized);
  const box = stored(geometry.output);
  const { background, outputHasAlpha } = context;
  const colour = outputHasAlpha ? background : { ...background, a: 255 };
  const stage: StagePlan = {
    kind: 'resize',
    to,
    cut: geometry.crop ? storedRegion(geometry.crop, orientation, to) : null,
    pad: geometry.pad ? { box, at: storedRegion(geometry.pad, orientation, box), colour, transparent: colour.a < 255 } : null,
    smart: geometry.smart ? { strategy: geometry.smart, box: geometry.output, orientation } : null,
  };
  return { stage, frame: { ...frame, size: box, alpha: frame.alpha || (geometry.pad !== null && colour.a < 255) } };
}

/**
 * A resize's sizes, checked: the result and the picture before cover's cut are each at most
 * MAX_RESIZE_SIDE per side and within the output pixel limit.
 */
function checkedGeometry(step: ResizeOptions, shown: Dimensions, names: StepNames, { limits }: ChainContext): FitGeometry {
  const geometry = fitGeometry(shown, step, names.field);
  for (const size of [geometry.output, geometry.resized]) {
    if (size.width > MAX_RESIZE_SIDE || size.height > MAX_RESIZE_SIDE) {
      throw invalidParameter(
        names.field(step.width !== undefined ? 'width' : 'height'),
        `the resized image would be ${size.width}x${size.height} pixels and each side may be at most ${MAX_RESIZE_SIDE}; ${names.picture(shown)}`,
      );
    }
    assertWithinPixelLimit(size, limits.maxOutputPixels, 'output');
  }
  return geometry;
}
