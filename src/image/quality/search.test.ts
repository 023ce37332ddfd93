import { describe, expect, it } from 'vitest';
import { interpolatedScore, searchQuality } from './search';

/** A score that grows with the quality, bent as encoders' are, and counts its calls. */
function curve(shape: (quality: number) => number) {
  const tried: number[] = [];
  return {
    tried,
    score: async (quality: number) => {
      tried.push(quality);
      return shape(quality);
    },
  };
}

const bent = (quality: number) => 100 - 1800 / (quality + 10);

describe('searchQuality', () => {
  it('finds the lowest quality that meets the target in a few trials', async () => {
    for (const target of [40, 55, 70, 80]) {
      const { score, tried } = curve(bent);
      const exact = Array.from({ length: 81 }, (_, i) => i + 20).find((q) => bent(q) >= target)!;
      const result = await searchQuality(score, target, { start: 80, maxTrials: 6 });
      expect(result.quality, `target ${target}`).toBe(exact);
      expect(new Set(tried).size).toBe(tried.length);
      expect(tried.length).toBeLessThanOrEqual(6);
    }
  });

  it('stops after maxTrials with a quality known to meet the target', async () => {
    const { score } = curve(bent);
    const result = await searchQuality(score, 60, { start: 80, maxTrials: 2 });
    expect(bent(result.quality)).toBeGreaterThanOrEqual(60);
    expect(result.scores.size).toBe(2);
  });

  it('answers the top of the range when nothing meets the target, and the bottom when everything does', async () => {
    expect(await searchQuality(curve(() => 10).score, 50, { start: 80, maxTrials: 8 })).toMatchObject({ quality: 100, met: false });
    expect((await searchQuality(curve(() => 99).score, 50, { start: 80, maxTrials: 8 })).quality).toBe(20);
    expect((await searchQuality(curve(() => 99).score, 50, { start: 80, maxTrials: 8, min: 60 })).quality).toBe(60);
  });

  it('answers where the curve points when its trials run out below the target, not the top of the range', async () => {
    const result = await searchQuality(curve((q) => q - 20).score, 65, { start: 80, maxTrials: 1, max: 100 });
    expect(result.met).toBe(false);
    expect(result.quality).toBeGreaterThan(80);
    expect(result.quality).toBeLessThan(100);
  });

  it('interpolates between tried qualities and knows nothing outside them', () => {
    const scores = new Map([
      [60, 50],
      [80, 70],
    ]);
    expect(interpolatedScore(scores, 70)).toBe(60);
    expect(interpolatedScore(scores, 80)).toBe(70);
    expect(interpolatedScore(scores, 90)).toBeUndefined();
  });
});
