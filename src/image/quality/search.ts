/*
 * The lowest quality whose score meets a target, searched with as few trials as the curve allows:
 * the score grows with the quality (nearly straight over a few steps), so each trial after the
 * first is the quality where the line through the nearest known points below and above the target
 * crosses it (from one side only: a typical slope); each trial shrinks the bracket.
 */

export const QUALITY_MIN = 20;
export const QUALITY_MAX = 100;

/** Score points a quality step adds near q80, for the first guess from one side (JPEG, WebP and AVIF: 0.4-0.9). */
export const FIRST_SLOPE = 0.6;

export interface SearchOptions {
  /** First quality tried. */
  start: number;
  /** Most trials (the first included). */
  maxTrials: number;
  min?: number;
  max?: number;
}

export interface SearchResult {
  /**
   * The lowest quality known to meet the target; where no quality tried did, the one the last
   * trials point to (`max` once `max` itself was tried).
   */
  quality: number;
  /** A quality tried met the target. */
  met: boolean;
  /** Every quality tried and its score. */
  scores: Map<number, number>;
}

/** Searches with `score(quality)` (memoised: a quality is never tried twice). */
export async function searchQuality(score: (quality: number) => Promise<number>, target: number, options: SearchOptions): Promise<SearchResult> {
  const min = options.min ?? QUALITY_MIN;
  const max = options.max ?? QUALITY_MAX;
  const scores = new Map<number, number>();
  // lo fails the target (or is below the range), hi meets it (or is above the range).
  let lo = min - 1;
  let hi = max + 1;
  const tryQuality = async (quality: number) => {
    let value = scores.get(quality);
    if (value === undefined) {
      value = await score(quality);
      scores.set(quality, value);
    }
    if (value >= target) hi = Math.min(hi, quality);
    else lo = Math.max(lo, quality);
  };
  await tryQuality(clamp(Math.round(options.start), min, max));
  while (scores.size < options.maxTrials && hi - lo > 1) await tryQuality(nextGuess(scores, target, lo, hi, min, max));
  if (hi <= max) return { quality: hi, scores, met: true };
  // Out of trials below the target: the quality the curve's last step points to (untried), not the top of the range.
  return { quality: lo >= max ? max : nextGuess(scores, target, lo, hi, min, max), scores, met: false };
}

function nextGuess(scores: Map<number, number>, target: number, lo: number, hi: number, min: number, max: number): number {
  const below = scores.get(lo);
  const above = scores.get(hi);
  let guess: number;
  if (below !== undefined && above !== undefined && above > below) guess = lo + ((target - below) / (above - below)) * (hi - lo);
  else if (below !== undefined) guess = lo + Math.max(1, (target - below) / FIRST_SLOPE);
  else if (above !== undefined) guess = hi - Math.max(1, (above - target) / FIRST_SLOPE);
  else guess = (lo + hi) / 2;
  return clamp(Math.ceil(guess), Math.max(lo + 1, min), Math.min(hi - 1, max));
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** Score at `quality` from the known points: exact where tried, on the line between its neighbours otherwise. */
export function interpolatedScore(scores: Map<number, number>, quality: number): number | undefined {
  const exact = scores.get(quality);
  if (exact !== undefined) return exact;
  const known = [...scores.keys()].sort((a, b) => a - b);
  const below = known.filter((q) => q < quality).at(-1);
  const above = known.find((q) => q > quality);
  if (below === undefined || above === undefined) return undefined;
  const a = scores.get(below)!;
  const b = scores.get(above)!;
  return a + ((b - a) * (quality - below)) / (above - below);
}
