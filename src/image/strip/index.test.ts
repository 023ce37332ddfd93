import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors';
import { corpus } from '../../../test/support/image-testing';
import { stripMetadata } from './index';

describe('stripMetadata', () => {
  it('dispatches by format', async () => {
    const png = await corpus('png/pngsuite/ct1n0g04.png');
    expect(stripMetadata('png', png).length).toBeLessThan(png.length);
    const jpeg = await corpus('jpeg/camera/Canon_40D.jpg');
    expect(stripMetadata('jpeg', jpeg).length).toBeLessThan(jpeg.length);
    const webp = await corpus('webp/test.webp');
    expect(stripMetadata('webp', webp).length).toBeLessThan(webp.length);
  });

  it('throws an internal (non-AppError) error for AVIF, which is handled elsewhere', async () => {
    const avif = await corpus('avif/fox.profile0.8bpc.yuv420.avif');
    let thrown: unknown;
    try {
      stripMetadata('avif', avif);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).not.toBeInstanceOf(AppError);
    expect((thrown as Error).message).toMatch(/AVIF/);
  });
});
