import { describe, expect, it } from 'vitest';
import { planJpegBands, type JpegBandPlan } from './bands';
import { readJpegHeader } from './header';
import { stitchJpegBands } from './stitch';
import { BASELINE, corpus, decodeRgba, encodeJpeg, rowsOf } from './test-codecs';

/** Band budget in the tests below: 4000 × 512 rows. */
const BAND_PIXELS = 4000 * 512;

/** Best of `runs` timings, in ms (the machine running the suite may be busy). */
function bestOf<T>(runs: number, run: () => T): { ms: number; result: T } {
  let best = Infinity;
  let result!: T;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    result = run();
    best = Math.min(best, performance.now() - start);
  }
  return { ms: best, result };
}

describe('speed (12 MP)', () => {
  it('plans and builds the bands of a 12 MP photo, and stitches a 12 MP encode, in time', async () => {
    const photo = await corpus('photos/photo-12mp.jpg'); // 4000x3000 4:2:0, 2.9 MB
    const planning = bestOf(5, () => planJpegBands(photo, BAND_PIXELS)!);
    const plan: JpegBandPlan = planning.result;
    const building = bestOf(5, () => plan.bands.map((band) => band.jpeg().length));
    const bandBytes = building.result.reduce((sum, n) => sum + n, 0);

    // The banded pipeline: each band decoded, its rows encoded on their own, the encodes stitched.
    const encodes: Uint8Array[] = [];
    for (const band of plan.bands) {
      const decoded = await decodeRgba(band.jpeg());
      encodes.push(await encodeJpeg(rowsOf(decoded, band.skipRows, band.rows), BASELINE));
    }
    const stitching = bestOf(3, () => stitchJpegBands(encodes));
    const stitched = stitching.result;
    const encodeBytes = encodes.reduce((sum, e) => sum + e.length, 0);

    console.log(
      `12 MP photo (${photo.length} bytes): plan ${planning.ms.toFixed(0)} ms, ${plan.bands.length} bands built in ${building.ms.toFixed(0)} ms (${bandBytes} bytes); ` +
        `stitching ${encodes.length} band encodes (${encodeBytes} bytes) took ${stitching.ms.toFixed(0)} ms, ${stitched.length} bytes`,
    );
    const header = readJpegHeader(stitched)!;
    expect([header.width, header.height]).toEqual([4000, 3000]);
    expect(planJpegBands(stitched, BAND_PIXELS)).not.toBeNull(); // its scan reads through to EOI
    // Generous bounds: the aim is under 150 ms each on an idle machine.
    expect(planning.ms).toBeLessThan(1000);
    expect(building.ms).toBeLessThan(1500);
    expect(stitching.ms).toBeLessThan(1500);
  }, 120_000);
});
