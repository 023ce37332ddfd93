import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors';
import { fitGeometry } from './fit';
import type { ResizeOptions } from './operations';

const photo = { width: 4000, height: 3000 };
const size = (picture: { width: number; height: number }, request: Partial<ResizeOptions>) => fitGeometry(picture, request).output;

describe('fitGeometry: sizes', () => {
  it('one side given: the other follows the aspect ratio, whatever keepAspectRatio or fit say', () => {
    for (const request of [{ keepAspectRatio: true }, { keepAspectRatio: false }, { fit: 'fill' as const }, { fit: 'outside' as const }]) {
      expect(size(photo, { width: 1000, ...request })).toEqual({ width: 1000, height: 750 });
      expect(size(photo, { height: 300, ...request })).toEqual({ width: 400, height: 300 });
      expect(size(photo, { width: 8000, ...request })).toEqual({ width: 8000, height: 6000 });
    }
  });

  it('rounds the derived side to the nearest integer, at least 1', () => {
    expect(size({ width: 1000, height: 333 }, { width: 500 })).toEqual({ width: 500, height: 167 });
    expect(size({ width: 1000, height: 333 }, { width: 100 })).toEqual({ width: 100, height: 33 });
    expect(size({ width: 10000, height: 10 }, { width: 100 })).toEqual({ width: 100, height: 1 });
    expect(size({ width: 10, height: 10000 }, { height: 1, keepAspectRatio: false })).toEqual({ width: 1, height: 1 });
  });

  it('inside fits the box, fill is the box, outside covers it, cover and contain are the box', () => {
    expect(size(photo, { width: 1000, height: 1000 })).toEqual({ width: 1000, height: 750 });
    expect(size({ width: 3000, height: 4000 }, { width: 1000, height: 1000, fit: 'inside' })).toEqual({ width: 750, height: 1000 });
    expect(size({ width: 400, height: 300 }, { width: 1200, height: 1200 })).toEqual({ width: 1200, height: 900 });
    expect(size(photo, { width: 123, height: 4567, keepAspectRatio: false })).toEqual({ width: 123, height: 4567 });
    expect(size(photo, { width: 1000, height: 1000, fit: 'outside' })).toEqual({ width: 1333, height: 1000 });
    expect(size(photo, { width: 1000, height: 1000, fit: 'cover' })).toEqual({ width: 1000, height: 1000 });
    expect(size(photo, { width: 1000, height: 1000, fit: 'contain' })).toEqual({ width: 1000, height: 1000 });
  });

  it('is the exact ratio where sharp, shrinking a JPEG on load, is a pixel short', () => {
    // sharp: 600x450 JPEG to height 90 loads at 1/4 (150x112, rounded down) and gives 121x90.
    expect(size({ width: 600, height: 450 }, { height: 90 })).toEqual({ width: 120, height: 90 });
    // sharp: 450x600 JPEG into 333x77 loads at 1/4 (112x150) and gives 57x77; 450 * 77 / 600 = 57.75.
    expect(size({ width: 450, height: 600 }, { width: 333, height: 77 })).toEqual({ width: 58, height: 77 });
  });

  it('property: every fit keeps the exact ratio, the derived side rounded to the nearest pixel', () => {
    const side = fc.integer({ min: 1, max: 12000 });
    const fits = fc.constantFrom('inside', 'outside', 'cover', 'contain', undefined);
    fc.assert(
      fc.property(side, side, side, side, fits, fc.boolean(), (sw, sh, bw, bh, fit, oneSide) => {
        const request: Partial<ResizeOptions> = oneSide && fit !== 'cover' && fit !== 'contain' ? { width: bw, fit } : { width: bw, height: bh, fit };
        const geometry = fitGeometry({ width: sw, height: sh }, request);
        const { width, height } = geometry.resized;
        // The side the box sets is exact; the other is the nearest pixel to the ratio (at least 1).
        const exactHeight = (sh * width) / sw;
        const exactWidth = (sw * height) / sh;
        const nearest = (value: number, got: number) => got === Math.max(1, Math.floor(value + 0.5));
        expect(nearest(exactHeight, height) || nearest(exactWidth, width)).toBe(true);
        if (fit === 'inside' || fit === undefined) {
          if (!oneSide) {
            expect(width).toBeLessThanOrEqual(bw);
            expect(height).toBeLessThanOrEqual(bh);
            expect(width === bw || height === bh).toBe(true);
          }
        }
        if (fit === 'outside' || fit === 'cover') {
          if (!oneSide || fit === 'cover') expect(width >= bw && height >= (oneSide ? 0 : bh) && (width === bw || height === bh)).toBe(true);
        }
        if (fit === 'cover' || fit === 'contain') expect(geometry.output).toEqual({ width: bw, height: bh });
      }),
      { numRuns: 500 },
    );
  });
});

describe('fitGeometry: where the picture goes', () => {
  const resized = { width: 601, height: 400 };
  const cut = (position: ResizeOptions['position']) => fitGeometry({ width: 1202, height: 800 }, { width: 400, height: 400, fit: 'cover', position });

  it("cuts cover's overflow as sharp's CalculateCrop: a centred cut rounds up", () => {
    expect(cut(undefined).resized).toEqual(resized);
    expect(cut(undefined).crop).toEqual({ x: 101, y: 0, width: 400, height: 400 });
    expect(cut({ kind: 'gravity', gravity: 'east' }).crop).toEqual({ x: 201, y: 0, width: 400, height: 400 });
    expect(cut({ kind: 'gravity', gravity: 'southwest' }).crop).toEqual({ x: 0, y: 0, width: 400, height: 400 });
    expect(cut({ kind: 'focal', x: 0.9, y: 0.5 }).crop).toEqual({ x: 201, y: 0, width: 400, height: 400 });
    expect(cut({ kind: 'focal', x: 0.4, y: 0.5 }).crop).toEqual({ x: 40, y: 0, width: 400, height: 400 });
    expect(cut({ kind: 'smart', strategy: 'attention' })).toMatchObject({ crop: null, smart: 'attention' });
  });

  it("places contain's picture as sharp's CalculateEmbedPosition: a centred picture rounds down", () => {
    const place = (gravity: 'center' | 'south' | 'east') => fitGeometry({ width: 1200, height: 801 }, { width: 400, height: 400, fit: 'contain', position: { kind: 'gravity', gravity } }).pad;
    expect(place('center')).toEqual({ x: 0, y: 66, width: 400, height: 267 });
    expect(place('south')).toEqual({ x: 0, y: 133, width: 400, height: 267 });
    expect(place('east')).toEqual({ x: 0, y: 66, width: 400, height: 267 });
  });

  it('refuses cover and contain without both sides, naming the missing one', () => {
    const refusal = (request: Partial<ResizeOptions>) => {
      try {
        fitGeometry(photo, request);
      } catch (error) {
        return error instanceof AppError ? [error.code, error.message] : error;
      }
      return null;
    };
    expect(refusal({ width: 100, fit: 'cover' })).toEqual(['INVALID_PARAMETERS', expect.stringContaining('"height"')]);
    expect(refusal({ height: 100, fit: 'contain' })).toEqual(['INVALID_PARAMETERS', expect.stringContaining('"width"')]);
    expect(refusal({ width: 100, height: 100, fit: 'contain', position: { kind: 'smart', strategy: 'entropy' } })).toEqual(['INVALID_PARAMETERS', expect.stringContaining('"position"')]);
  });
});
