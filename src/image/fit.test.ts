import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors';
import { fitGeometry } from './fit';
import type { ResizeOptions } from './operations';

const photo = { width: 4000, height: 3000 };
const size = (picture: { width: number; height: number }, request: Partial<ResizeOptions>, dctScaling = false) =>
  fitGeometry(picture, { keepAspectRatio: true, ...request }, dctScaling).output;

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

  it("follows sharp's JPEG shrink-on-load rounding where the decoder scales by DCT", () => {
    // 450x600 -> shrink 7.8: libjpeg 1/4 -> libvips 112x150 (rounded down) -> 57.5 -> 57.
    expect(size({ width: 450, height: 600 }, { width: 333, height: 77 }, true)).toEqual({ width: 57, height: 77 });
    expect(size({ width: 450, height: 600 }, { width: 333, height: 77 }, false)).toEqual({ width: 58, height: 77 });
  });

  it('property: inside touches the box on one side and stays inside it, with or without DCT scaling', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12000 }), fc.integer({ min: 1, max: 12000 }), fc.integer({ min: 1, max: 12000 }), fc.integer({ min: 1, max: 12000 }), fc.boolean(), (sw, sh, bw, bh, dct) => {
        const out = size({ width: sw, height: sh }, { width: bw, height: bh }, dct);
        expect(out.width).toBeLessThanOrEqual(bw);
        expect(out.height).toBeLessThanOrEqual(bh);
        expect(out.width === bw || out.height === bh).toBe(true);
        expect(Math.min(out.width, out.height)).toBeGreaterThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fitGeometry: where the picture goes', () => {
  const resized = { width: 601, height: 400 };
  const cut = (position: ResizeOptions['position']) => fitGeometry({ width: 1202, height: 800 }, { keepAspectRatio: true, width: 400, height: 400, fit: 'cover', position }, false);

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
    const place = (gravity: 'center' | 'south' | 'east') => fitGeometry({ width: 1200, height: 801 }, { keepAspectRatio: true, width: 400, height: 400, fit: 'contain', position: { kind: 'gravity', gravity } }, false).pad;
    expect(place('center')).toEqual({ x: 0, y: 66, width: 400, height: 267 });
    expect(place('south')).toEqual({ x: 0, y: 133, width: 400, height: 267 });
    expect(place('east')).toEqual({ x: 0, y: 66, width: 400, height: 267 });
  });

  it('refuses cover and contain without both sides, naming the missing one', () => {
    const refusal = (request: Partial<ResizeOptions>) => {
      try {
        fitGeometry(photo, { keepAspectRatio: true, ...request }, false);
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
