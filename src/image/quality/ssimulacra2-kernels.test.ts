import { describe, expect, it } from 'vitest';
import { decodeRgba, encodeWith } from '../../../test/support/image-testing';
import { distorted, scoreInBands, texturedPicture, type Distortion } from '../../../test/support/quality-pictures';
import type { RgbaImage } from '../types';
import { Ssimulacra2 } from './ssimulacra2';
import { Ssimulacra2Kernel, ssimulacra2KernelBytes } from './ssimulacra2-kernels';

const score = scoreInBands;

describe('SSIMULACRA 2 in WebAssembly', () => {
  const picture = texturedPicture(160, 120);

  it('scores identical pictures 100', () => {
    expect(score(Ssimulacra2Kernel, picture, picture)).toBe(100);
  });

  it.each(['blur', 'noise', 'banding', 'shift'] as const)('scores a %s picture as the TypeScript metric does', (distortion) => {
    const other = distorted(picture, distortion as Distortion);
    expect(Math.abs(score(Ssimulacra2Kernel, picture, other) - score(Ssimulacra2, picture, other))).toBeLessThan(0.05);
  });

  it('scores our JPEG and AVIF, small, narrow and half-transparent pictures as the TypeScript metric does', async () => {
    const pairs: [RgbaImage, RgbaImage][] = [
      [picture, await decodeRgba('jpeg', await encodeWith('jpeg', picture, 40))],
      [picture, await decodeRgba('avif', await encodeWith('avif', picture, 50))],
    ];
    for (const [width, height] of [[37, 29], [9, 300], [7, 7], [301, 17]]) {
      const small = texturedPicture(width, height);
      pairs.push([small, distorted(small, 'blur')]);
    }
    const seeThrough = texturedPicture(64, 48);
    for (let i = 3; i < seeThrough.data.length; i += 4) seeThrough.data[i] = (i * 7) & 255;
    pairs.push([seeThrough, distorted(seeThrough, 'noise')]);
    for (const [a, b] of pairs) {
      expect(Math.abs(score(Ssimulacra2Kernel, a, b, [5, 64]) - score(Ssimulacra2, a, b)), `${a.width}x${a.height}`).toBeLessThan(0.05);
    }
  });

  it('holds a memory of its stated size, about 3.7 KB a column', () => {
    const metric = new Ssimulacra2Kernel(4000, 3000);
    expect(metric.heldBytes()).toBe(ssimulacra2KernelBytes(4000, 3000));
    metric.close();
    expect(metric.heldBytes()).toBe(0);
    expect(ssimulacra2KernelBytes(4000, 3000)).toBeLessThan(4000 * 3700);
    expect(ssimulacra2KernelBytes(4000, 3000)).toBe(ssimulacra2KernelBytes(4000, 400));
  });
});
