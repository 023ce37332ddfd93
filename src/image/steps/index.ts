import type { Orientation } from '../exif';
import type { Colour, PixelLimits, Region, Step, Transform } from '../operations';
import type { SourceWindow } from '../stages/resize';
import type { Dimensions } from '../types';
import { planCrop } from './crop';
import { planResize } from './resize';
import { planTurn } from './turn';

/*
 * A transform's steps, planned from the header before anything is decoded: each step is checked
 * against the picture as it stands at that step, and becomes a stage of the band pipeline in the
 * stored orientation. Rotations and flips become one orientation of the stored pixels, applied
 * once at the end by the orientation machinery (the encoder places rows itself, or an oriented
 * frame, or strips): a crop or resize after them is the same cut or resize of the stored pixels,
 * and blur, sharpen and grayscale treat both axes alike, so they give the same pixels either side
 * of a turn.
 */

/** The picture as it stands between two steps. */
export interface Frame {
  /** Its size in the stored orientation (before `orientation`). */
  size: Dimensions;
  /** How the stored pixels are shown: the EXIF orientation turned by the rotate and flip steps so far. */
  orientation: Orientation;
  /** The pixels can carry transparency. */
  alpha: boolean;
}

/** contain's box (stored orientation) and where the resized picture sits in it. */
export interface PadPlan {
  box: Dimensions;
  at: Region;
  /** The background: opaque where the output format has no alpha. */
  colour: Colour;
  /** The background is transparent and the output keeps alpha: the padded picture carries alpha. */
  transparent: boolean;
}

/** cover with entropy or attention: the cut is chosen by looking at the resized picture. */
export interface SmartPlan {
  strategy: 'entropy' | 'attention';
  /** The box, as shown at that step. */
  box: Dimensions;
  /** The frame's orientation at that step, which shows the resized picture upright for scoring. */
  orientation: Orientation;
}

/** One stage between decoder and encoder, in the stored orientation. */
export type StagePlan =
  /** Only these rows and columns of the picture as it stands. */
  | { kind: 'crop'; region: Region }
  /** Lanczos-3 to `to`; cover then cuts `cut`, contain pads into `pad`. */
  | {
      kind: 'resize';
      to: Dimensions;
      cut: Region | null;
      pad: PadPlan | null;
      smart: SmartPlan | null;
      /** The part of its input it shows, where that falls between pixels (a crop decoded at a shrink, plan.ts shrinkCropOnLoad). */
      shown?: SourceWindow | null;
    }
  | { kind: 'blur'; sigma: number }
  | { kind: 'sharpen'; sigma: number }
  | { kind: 'grayscale' };

/** How a step's fields are named in errors (Transform.fieldNames), and how the picture is described. */
export interface StepNames {
  field(name: string): string;
  /** The picture as it stands, for messages: "the image is 8x6 pixels (as displayed, ...)". */
  picture(size: Dimensions): string;
}

export interface ChainContext {
  limits: PixelLimits;
  background: Colour;
  outputHasAlpha: boolean;
}

export interface ChainPlan {
  stages: StagePlan[];
  /** The picture after the last step. */
  frame: Frame;
}

/** Every step planned in order from `start` (the decoded picture), checked; the stages simplified. */
export function planChain(transform: Transform, start: Frame, context: ChainContext): ChainPlan {
  let frame = start;
  const stages: StagePlan[] = [];
  transform.steps.forEach((step, index) => {
    const planned = planStep(step, frame, namesOf(transform, index), context);
    frame = planned.frame;
    if (planned.stage) stages.push(planned.stage);
  });
  return { stages: simplified(stages, start.size), frame };
}

function namesOf(transform: Transform, index: number): StepNames {
  const pixels = ({ width, height }: Dimensions) => `${width}x${height} pixels`;
  if (transform.fieldNames === 'form') return { field: (name) => name, picture: (size) => `the image is ${pixels(size)} (as displayed, after EXIF orientation)` };
  return { field: (name) => `steps[${index}].${name}`, picture: (size) => `at steps[${index}] the picture is ${pixels(size)} (after EXIF orientation and the steps before it)` };
}

function planStep(step: Step, frame: Frame, names: StepNames, context: ChainContext): { stage: StagePlan | null; frame: Frame } {
  switch (step.op) {
    case 'crop':
      return planCrop(step, frame, names);
    case 'resize':
      return planResize(step, frame, names, context);
    case 'rotate':
    case 'flip':
      return { stage: null, frame: planTurn(step, frame) };
    case 'blur':
    case 'sharpen':
      return { stage: { kind: step.op, sigma: step.sigma }, frame };
    case 'grayscale':
      return { stage: { kind: 'grayscale' }, frame };
    case 'remove-metadata':
      return { stage: null, frame };
  }
}

/** The size of the picture after `stage`, given its size before. */
export function sizeAfter(stage: StagePlan, size: Dimensions): Dimensions {
  switch (stage.kind) {
    case 'crop':
      return { width: stage.region.width, height: stage.region.height };
    case 'resize':
      return stage.pad?.box ?? (stage.cut ? { width: stage.cut.width, height: stage.cut.height } : stage.to);
    default:
      return size;
  }
}

/**
 * The same pixels with less work: a crop of the whole picture goes, two crops in a row are one, and
 * a crop right after a resize that pads nothing and chooses no cut by looking becomes its cut (only
 * the kept columns are made).
 */
function simplified(stages: StagePlan[], start: Dimensions): StagePlan[] {
  const out: StagePlan[] = [];
  let size = start;
  for (const stage of stages) {
    const previous = out.at(-1);
    if (stage.kind === 'crop') {
      const { region } = stage;
      if (region.x === 0 && region.y === 0 && region.width === size.width && region.height === size.height) continue;
      if (previous?.kind === 'crop') {
        out[out.length - 1] = { kind: 'crop', region: { ...region, x: previous.region.x + region.x, y: previous.region.y + region.y } };
        size = sizeAfter(stage, size);
        continue;
      }
      if (previous?.kind === 'resize' && !previous.pad && !previous.smart) {
        const cut = previous.cut ?? { x: 0, y: 0, ...previous.to };
        out[out.length - 1] = { ...previous, cut: { ...region, x: cut.x + region.x, y: cut.y + region.y } };
        size = sizeAfter(stage, size);
        continue;
      }
    }
    out.push(stage);
    size = sizeAfter(stage, size);
  }
  return out;
}
