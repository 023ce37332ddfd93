import { describe, expect, it } from 'vitest';
import { AppError } from '../errors';
import { assertWithinPixelLimit } from './limits';
import { expectAppError } from '../../test/support/image-testing';

describe('assertWithinPixelLimit', () => {
  it('names the image size and the limit in megapixels', () => {
    const error = expectAppError(() => assertWithinPixelLimit({ width: 20000, height: 20000 }, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(error).toBeInstanceOf(AppError);
    expect(error.message).toBe('The image is 20000x20000 (400.0 megapixels); the limit for input images is 40 megapixels.');
  });

  it('words output limits and fractional limits', () => {
    const error = expectAppError(() => assertWithinPixelLimit({ width: 5000, height: 3000 }, 12_500_000, 'output'), 'FILE_TOO_LARGE');
    expect(error.message).toBe('The image is 5000x3000 (15.0 megapixels); the limit for output images is 12.5 megapixels.');
  });

  it('accepts an image exactly at the limit and rejects one pixel more, with a size that reads as larger', () => {
    expect(() => assertWithinPixelLimit({ width: 8000, height: 5000 }, 40_000_000, 'input')).not.toThrow();
    expect(() => assertWithinPixelLimit({ width: 1, height: 1 }, 40_000_000, 'input')).not.toThrow();
    const error = expectAppError(() => assertWithinPixelLimit({ width: 40_000_001, height: 1 }, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(error.message).toContain('(40.000001 megapixels); the limit for input images is 40 megapixels.');
    const slightly = expectAppError(() => assertWithinPixelLimit({ width: 8001, height: 5000 }, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(slightly.message).toContain('(40.01 megapixels)');
  });

  it('handles the largest sizes headers can declare', () => {
    const error = expectAppError(() => assertWithinPixelLimit({ width: 0x7fffffff, height: 0x7fffffff }, 40_000_000, 'input'), 'FILE_TOO_LARGE');
    expect(error.message).toMatch(/^The image is 2147483647x2147483647 \(\d+\.\d megapixels\)/);
  });
});
