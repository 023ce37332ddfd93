import type { Orientation } from '../exif';
import type { Step } from '../operations';
import { turned } from '../stages/orient';
import type { Frame } from './index';

/** A rotation (clockwise) or flip as the EXIF orientation that shows an upright picture so. */
const TURNS: Record<string, Orientation> = { 'rotate 90': 6, 'rotate 180': 3, 'rotate 270': 8, 'flip horizontal': 2, 'flip vertical': 4 };

/** rotate and flip change how the stored pixels are shown, not the pixels: one orientation for the end. */
export function planTurn(step: Extract<Step, { op: 'rotate' | 'flip' }>, frame: Frame): Frame {
  const turn = TURNS[step.op === 'rotate' ? `rotate ${step.angle}` : `flip ${step.axis}`];
  return { ...frame, orientation: turned(frame.orientation, turn) };
}
