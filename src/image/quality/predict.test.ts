import { describe, expect, it } from 'vitest';
import { bandsOf } from '../../../test/support/row-sources';
import { texturedPicture } from '../../../test/support/quality-pictures';
import { corpus, decodeRgba, encodeWith } from '../../../test/support/image-testing';
import { predictQuality, sampleCheckBytes, scoreOnSample } from './predict';

describe('predictQuality and scoreOnSample', () => {
  const picture = texturedPicture(900, 700);

  it('predicts a higher quality for a higher target', async () => {
    const low = await predictQuality(bandsOf(picture, [64], false), 'jpeg', { target: 55, sampleMargin: 0 });
    const high = await predictQuality(bandsOf(picture, [64], false), 'jpeg', { target: 75, sampleMargin: 0 });
    expect(high.quality).toBeGreaterThan(low.quality);
    expect(high.scores.size).toBeLessThanOrEqual(5);
    expect(high.layout.tiles.length).toBe(16);
  });

  it("scores a JPEG of a photo on the sample's tiles as the sample predicted", async () => {
    // The tiles start on multiples of 16: a JPEG's blocks hold the same pixels in the mosaic as in the photo.
    const photo = await decodeRgba('jpeg', await corpus('photos/photo-1mp.jpg'));
    const prediction = await predictQuality(bandsOf(photo, [64], false), 'jpeg', { target: 65, sampleMargin: 0 });
    const result = await encodeWith('jpeg', photo, prediction.quality);
    expect(Math.abs((await scoreOnSample(result, 'jpeg', prediction, false)) - prediction.scores.get(prediction.quality)!)).toBeLessThan(0.5);
  });

  it('states what it holds: two mosaics and the metric for one, at most about 4 MB', () => {
    expect(sampleCheckBytes(4000, 3000)).toBeLessThan(4 * 2 ** 20);
    expect(sampleCheckBytes(4000, 3000)).toBe(sampleCheckBytes(6000, 4000));
    expect(sampleCheckBytes(300, 200)).toBeLessThan(sampleCheckBytes(4000, 3000));
  });
});
