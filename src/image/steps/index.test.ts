import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors';
import type { Step } from '../operations';
import { planChain } from './index';

const context = { limits: { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 }, background: { r: 255, g: 255, b: 255, a: 255 }, outputHasAlpha: true };
const plan = (steps: Step[], size = { width: 80, height: 60 }, orientation: 1 | 6 = 1) =>
  planChain({ steps, quality: 80 }, { size, orientation, alpha: false }, context);
const refusal = (steps: Step[]) => {
  try {
    plan(steps);
  } catch (error) {
    if (error instanceof AppError) return error.message;
    throw error;
  }
  throw new Error('not refused');
};

describe('planChain', () => {
  it('turns rotations and flips into one orientation, and the crops after them into the stored pixels they show', () => {
    const chain = plan([{ op: 'rotate', angle: 90 }, { op: 'crop', x: 10, y: 5, width: 20, height: 30 }, { op: 'flip', axis: 'horizontal' }]);
    // Shown turned clockwise (60x80): x 10..30 are stored rows 60-30..60-10, y 5..35 stored columns.
    expect(chain.stages).toEqual([{ kind: 'crop', region: { x: 5, y: 30, width: 30, height: 20 } }]);
    // A quarter clockwise then mirrored is a transpose (EXIF 5).
    expect(chain.frame).toMatchObject({ orientation: 5, size: { width: 30, height: 20 } });
  });

  it("composes with the file's own orientation", () => {
    expect(plan([{ op: 'rotate', angle: 270 }], { width: 80, height: 60 }, 6).frame.orientation).toBe(1);
    expect(plan([{ op: 'rotate', angle: 180 }, { op: 'rotate', angle: 180 }]).frame.orientation).toBe(1);
  });

  it('merges crops in a row and makes a crop after a plain resize its cut', () => {
    const chain = plan([{ op: 'crop', x: 10, y: 10, width: 60, height: 40 }, { op: 'crop', x: 5, y: 5, width: 20, height: 20 }, { op: 'resize', width: 10 }, { op: 'crop', x: 2, y: 1, width: 5, height: 5 }, { op: 'blur', sigma: 1 }]);
    expect(chain.stages).toEqual([
      { kind: 'crop', region: { x: 15, y: 15, width: 20, height: 20 } },
      { kind: 'resize', to: { width: 10, height: 10 }, cut: { x: 2, y: 1, width: 5, height: 5 }, pad: null, smart: null },
      { kind: 'blur', sigma: 1 },
    ]);
    expect(chain.frame.size).toEqual({ width: 5, height: 5 });
  });

  it('checks each step against the picture as it stands there, naming steps[i].field', () => {
    expect(refusal([{ op: 'rotate', angle: 90 }, { op: 'crop', x: 0, y: 0, width: 61, height: 10 }])).toMatch(/^Invalid parameter "steps\[1\]\.width": .* at steps\[1\] the picture is 60x80 pixels/);
    expect(refusal([{ op: 'resize', height: 10 }, { op: 'crop', x: 13, y: 0, width: 1, height: 1 }])).toContain('"steps[1].x"');
    expect(refusal([{ op: 'crop', x: 0, y: 0, width: 80, height: 1 }, { op: 'resize', height: 200 }])).toContain('"steps[1].height"');
    expect(refusal([{ op: 'resize', width: 10, fit: 'cover' }])).toContain('"steps[0].height"');
  });
});
