import { FIRST_SLOPE, interpolatedScore, QUALITY_MIN, searchQuality, type SearchOptions } from './search';

/*
 * quality=auto (issue 39): the lowest quality whose result scores at least `target`, predicted on
 * the sample (sample.ts: tiles encoded, decoded and scored, a few qualities), then the whole
 * picture encoded once and scored once, and corrected at most once: up when it missed the target,
 * down when it overshot by more than `overshoot` (kept only if it still meets the target). A pure
 * function over its steps: the run supplies how a quality is tried on the sample, how the whole
 * picture is encoded and how a result is scored (the encoder's input rows against it decoded).
 */

export interface AutoQualitySteps<Result> {
  /** SSIMULACRA 2 of the sample encoded at `quality` and decoded. */
  sampleScore(quality: number): Promise<number>;
  /** The whole picture encoded at `quality`. */
  encode(quality: number): Promise<Result>;
  /** SSIMULACRA 2 of a result against the pixels that went into the encoder. */
  score(result: Result): Promise<number>;
  /** A result that will not be kept (the run drops what it holds of it). */
  discard?(result: Result): void;
}

export interface AutoQualityOptions {
  target: number;
  /**
   * Score points the sample is asked for above the target: the sample's score differs from the
   * whole picture's (calibrated per format), and a miss costs a second encode.
   */
  sampleMargin: number;
  /** A first result this far above the target is encoded again lower (Infinity: never). */
  overshoot: number;
  /** A first result that missed the target is encoded again higher (default); false: never corrected at all. */
  corrects?: boolean;
  search?: Partial<SearchOptions>;
}

export interface AutoQualityResult<Result> {
  result: Result;
  quality: number;
  score: number;
  /** Whole-picture encodes (1 or 2) and sample trials, for the run's accounting. */
  encodes: number;
  sampleTrials: number;
}

const DEFAULT_SEARCH: SearchOptions = { start: 80, maxTrials: 5 };
/** Trials of the sample the correction may add. */
const CORRECTION_TRIALS = 3;

export async function autoQuality<Result>(steps: AutoQualitySteps<Result>, options: AutoQualityOptions): Promise<AutoQualityResult<Result>> {
  const { target, sampleMargin } = options;
  const search = { ...DEFAULT_SEARCH, ...options.search };
  const cache = new Map<number, number>();
  const sampleScore = async (quality: number) => {
    let score = cache.get(quality);
    if (score === undefined) cache.set(quality, (score = await steps.sampleScore(quality)));
    return score;
  };
  const predicted = await searchQuality(sampleScore, target + sampleMargin, search);
  const first = await steps.encode(predicted.quality);
  const firstScore = await steps.score(first);
  const done = (result: Result, quality: number, score: number, encodes: number) => ({ result, quality, score, encodes, sampleTrials: cache.size });
  const missed = firstScore < target;
  const max = search.max ?? 100;
  if (options.corrects === false) return done(first, predicted.quality, firstScore, 1);
  if (!missed && firstScore - target <= options.overshoot) return done(first, predicted.quality, firstScore, 1);
  if (missed && predicted.quality >= max) return done(first, predicted.quality, firstScore, 1);

  /**
   * A miss: the sample's curve moved by what the whole picture scored against the sample at that
   * quality, searched for the target with the first prediction's margin again.
   */
  const upwards = async () => {
    const offset = firstScore - (interpolatedScore(cache, predicted.quality) ?? firstScore);
    const corrected = await searchQuality(async (quality) => (await sampleScore(quality)) + offset, target + sampleMargin, {
      ...search,
      start: predicted.quality + 1,
      maxTrials: CORRECTION_TRIALS,
      min: predicted.quality + 1,
      max,
    });
    return corrected.quality;
  };
  /**
   * An overshoot: down by what the sample's chord from the lowest quality tried says the excess
   * over the target (and the margin) is worth, without more trials. The chord, not the local
   * slope: WebP's curves have steps (libwebp's quantiser falls three times as fast per step above
   * q75) that the sample and the picture do not share, and a local search there often misses.
   */
  const downwards = () => {
    const lowest = Math.min(...[...cache.keys()].filter((quality) => quality < predicted.quality));
    const at = cache.get(predicted.quality);
    const slope = Number.isFinite(lowest) && at !== undefined ? (at - cache.get(lowest)!) / (predicted.quality - lowest) : FIRST_SLOPE;
    if (!(slope > 0)) return null;
    const drop = Math.floor((firstScore - target - sampleMargin) / slope);
    return drop > 0 ? Math.max(search.min ?? QUALITY_MIN, predicted.quality - drop) : null;
  };
  const quality = missed ? await upwards() : downwards();
  if (quality === null || quality === predicted.quality) return done(first, predicted.quality, firstScore, 1);
  // A first result that missed is replaced whatever the second scores: it goes before the second is made.
  if (missed) steps.discard?.(first);
  const second = await steps.encode(quality);
  const secondScore = await steps.score(second);
  if (missed) return done(second, quality, secondScore, 2);
  if (secondScore >= target) {
    steps.discard?.(first);
    return done(second, quality, secondScore, 2);
  }
  steps.discard?.(second);
  return done(first, predicted.quality, firstScore, 2);
}
