import { describe, expect, it } from 'vitest';
import { autoQuality, type AutoQualitySteps } from './auto-quality';

/**
 * Steps whose sample scores `sample(q)` and whole picture `whole(q)`; a result is its quality.
 * Counts encodes and remembers what was discarded.
 */
function steps(sample: (q: number) => number, whole: (q: number) => number) {
  const encoded: number[] = [];
  const discarded: number[] = [];
  const fake: AutoQualitySteps<number> = {
    sampleScore: async (q) => sample(q),
    encode: async (q) => {
      encoded.push(q);
      return q;
    },
    score: async (q) => whole(q),
    discard: (q) => discarded.push(q),
  };
  return { fake, encoded, discarded };
}

const linear = (offset: number) => (q: number) => q - 10 + offset;
const options = { target: 65, sampleMargin: 0, overshoot: 2 };

describe('autoQuality', () => {
  it('encodes the whole picture once where the sample predicted it', async () => {
    const { fake, encoded } = steps(linear(0), linear(0.5));
    const result = await autoQuality(fake, options);
    expect(result).toMatchObject({ result: 75, quality: 75, score: 65.5, encodes: 1 });
    expect(encoded).toEqual([75]);
  });

  it('corrects once upwards when the whole picture misses the target, by how far the sample was off', async () => {
    const { fake, encoded, discarded } = steps(linear(0), linear(-3));
    const result = await autoQuality(fake, options);
    expect(encoded).toEqual([75, 78]);
    expect(result).toMatchObject({ quality: 78, score: 65, encodes: 2 });
    expect(discarded).toEqual([75]);
  });

  it('keeps the corrected result even if it still misses (at most one correction)', async () => {
    const { fake, encoded } = steps(linear(0), (q) => (q === 75 ? 62 : 60));
    const result = await autoQuality(fake, options);
    expect(encoded).toHaveLength(2);
    expect(result.score).toBe(60);
  });

  it('corrects once downwards when it overshoots, and keeps the first result if the second misses', async () => {
    const down = steps(linear(0), linear(4));
    expect(await autoQuality(down.fake, options)).toMatchObject({ quality: 71, score: 65, encodes: 2 });
    expect(down.discarded).toEqual([75]);

    const missed = steps(linear(0), (q) => (q === 75 ? 69 : 60));
    expect(await autoQuality(missed.fake, options)).toMatchObject({ quality: 75, score: 69, encodes: 2 });
    expect(missed.discarded).toEqual([missed.encoded[1]]);
  });

  it('never corrects downwards where overshoot is Infinity (AVIF: a second encode costs too much)', async () => {
    const { fake, encoded } = steps(linear(0), linear(10));
    await autoQuality(fake, { ...options, overshoot: Infinity });
    expect(encoded).toEqual([75]);
  });

  it('asks the sample for the margin above the target', async () => {
    const { fake, encoded } = steps(linear(0), linear(0));
    await autoQuality(fake, { ...options, sampleMargin: 1.5 });
    expect(encoded[0]).toBe(77);
  });
});
