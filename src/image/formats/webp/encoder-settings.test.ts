import { describe, expect, it } from 'vitest';
import { gradient } from '../../../../test/workers/images';
import { avifSpeedFor } from '../avif/encode-tile';
import { encodeWith } from '../../../../test/support/image-testing';

/** The start-of-frame markers in a JPEG, in order (C0 baseline, C1 extended, C2 progressive). */
function frameMarkers(bytes: Uint8Array): number[] {
  const found = [];
  for (let i = 2; i + 3 < bytes.length; ) {
    if (bytes[i] !== 0xff) break;
    const marker = bytes[i + 1];
    if (marker === 0xda) break;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) found.push(marker);
    i += 2 + ((bytes[i + 2] << 8) | bytes[i + 3]);
  }
  return found;
}

describe('encoder settings chosen by measurement (see the codecs)', () => {
  it('writes baseline JPEG (one scan), not progressive', async () => {
    const jpeg = await encodeWith('jpeg', gradient(64, 48), 80);
    expect(frameMarkers(jpeg)).toEqual([0xc0]);
  });

  it('picks the AVIF speed by size: slower for small images, 9 from 3.5 MP up', () => {
    expect(avifSpeedFor(1200 * 800)).toBe(7);
    expect(avifSpeedFor(1920 * 1080)).toBe(8);
    expect(avifSpeedFor(4000 * 3000)).toBe(9);
    expect(avifSpeedFor(6000 * 4000)).toBe(9);
  });
});
