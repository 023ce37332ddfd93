import { FORMATS, type EncodeFacts } from '../formats/index';
import type { Dimensions } from '../types';
import { AUTO_QUALITY, WHOLE_SCORE_MAX_PIXELS, type AutoFormat } from './calibration';
import { sampleBytes, sampleLayout } from './sample';
import { scoreRowsBytes } from './score-rows';

/*
 * How a quality=auto run (auto-run.ts) chooses and checks its result, decided from the result's
 * size before anything is decoded, and what it holds beside the passes of a plain run, for the
 * memory plan (plan.ts memoryPlan).
 */

export interface AutoPlan {
  /** The SSIMULACRA 2 score to reach. */
  target: number;
  /**
   * How the result is scored: `picture`, decoded whole against the encoder's input read once more
   * (results of at most WHOLE_SCORE_MAX_PIXELS); `sample`, decoded and cut into the sample's tiles;
   * `trial`, not at all: the sample's trial at the chosen quality is the result's score (a picture
   * that is its own sample, or a JPEG, whose tiles hold the same blocks in the sample as in the
   * picture: within 0.5 points).
   */
  check: 'picture' | 'sample' | 'trial';
  /** What the reported score covers: the whole picture, or the sample's tiles. */
  measuredOn: 'picture' | 'sample';
  /**
   * The result is held in memory until it is final (checked, perhaps replaced, compared) and then
   * handed to storage whole; otherwise it streams to storage as a plain run's does.
   */
  holdsResult: boolean;
  /** A first result may be corrected (scored whole): kept while a lower quality is tried. */
  correctsDown: boolean;
  /** format=best's other candidates: the smallest result so far is held while this one is made. */
  others: AutoFormat[];
}

export function autoPlanFor(output: Dimensions, format: AutoFormat, target: number, others: AutoFormat[] = []): AutoPlan {
  const ownSample = sampleLayout(output.width, output.height).tiles.length === 1;
  const whole = output.width * output.height <= WHOLE_SCORE_MAX_PIXELS;
  const check = ownSample || (!whole && FORMATS[format].trialScoresResultTiles) ? 'trial' : whole ? 'picture' : 'sample';
  return {
    target,
    check,
    measuredOn: ownSample || whole ? 'picture' : 'sample',
    holdsResult: others.length > 0 || check !== 'trial',
    correctsDown: check === 'picture',
    others,
  };
}

/** What quality=auto adds to a run's phases (memory-plan.ts phasePeaks). */
export interface AutoMemory {
  /** Held beside every pass: the sample (and its tiles' copies while it is collected), results kept. */
  beside: number;
  /** The trials: the sample's copy, its encoder, file and decoder, the metric; the result so far. */
  trials: number;
  /** The check of a result: the result, its decoder and the metric, and the input read again for a whole score. */
  check: number;
}

/**
 * `facts` are the result's at the highest quality auto may choose; `rereadBytes` what reading the
 * encoder's input once more holds (decoder, stages, and a frame turning rows the encoder would
 * have placed).
 */
export function autoMemory(auto: AutoPlan, format: AutoFormat, facts: EncodeFacts, rereadBytes: number): AutoMemory {
  const info = FORMATS[format];
  const { width, height } = facts.output;
  const layout = sampleLayout(width, height);
  const sample = sampleBytes(layout);
  const mosaicFacts: EncodeFacts = { ...facts, output: layout.size, orientation: 1, lowMemory: false, maxResultBytes: undefined, packedBytes: undefined };
  const trialEncoder = info.encodeCost(mosaicFacts);
  const decodeCost = (f: EncodeFacts) => info.resultDecodeCost!(f);
  const metricAt = (size: Dimensions) => scoreRowsBytes(size.width, size.height);
  const trial = sample + Math.max(trialEncoder.streaming, trialEncoder.finishing ?? 0) + info.resultBound(mosaicFacts) + decodeCost(mosaicFacts) + metricAt(layout.size);
  const result = auto.holdsResult ? info.resultBound(facts) : 0;
  const unbounded = { ...facts, maxResultBytes: undefined };
  const othersHeld = Math.max(0, ...auto.others.map((other) => FORMATS[other].resultBound(unbounded)));
  const kept = (auto.correctsDown ? result : 0) + othersHeld;
  let check = 0;
  if (auto.check === 'picture') check = result + rereadBytes + decodeCost(facts) + metricAt(facts.output);
  if (auto.check === 'sample') check = result + decodeCost(facts) + sample + metricAt(layout.size);
  return { beside: 2 * sample + kept, trials: trial + result, check };
}

/**
 * What quality=auto may hold beyond the plain conversion of the same picture (docs/performance.md,
 * "quality=auto"), for a result of `resultBytes`: the metric (3.7 KB a column of what it scores:
 * the whole picture, or the sample), the sample and its tiles' copies, the result itself (held
 * until it is final) and a decoder of it. Everything else an auto run holds, a plain run holds too.
 */
export function autoShareBytes(format: AutoFormat, output: Dimensions, resultBytes: number, alpha = false): number {
  const layout = sampleLayout(output.width, output.height);
  const scored = output.width * output.height <= WHOLE_SCORE_MAX_PIXELS ? output : layout.size;
  const facts: EncodeFacts = { output, quality: 80, alpha, grey: false, lowMemory: false, orientation: 1 };
  return scoreRowsBytes(scored.width, scored.height) + 2 * sampleBytes(layout) + resultBytes + FORMATS[format].resultDecodeCost!(facts);
}
