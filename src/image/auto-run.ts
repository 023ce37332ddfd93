import { AppError } from '../errors';
import { FORMATS } from './formats/index';
import type { QualityScore, Region } from './operations';
import { encodeFacts, type ProcessingPlan } from './plan';
import { ResultBuffer } from './result-buffer';
import type { ResultSink, ResultTarget } from './result-sink';
import type { AutoPlan } from './quality/auto-plan';
import { autoQuality, type AutoQualityResult } from './quality/auto-quality';
import { AUTO_MAX_QUALITY, AUTO_QUALITY, type AutoFormat } from './quality/calibration';
import { collectSample, collectTiles, sampleBytes, sampleLayout, type SampleLayout } from './quality/sample';
import { sampleTrial } from './quality/sample-trial';
import { scoreRows } from './quality/score-rows';
import { FIRST_SLOPE, QUALITY_MIN, searchQuality } from './quality/search';
import { orientRows } from './stages/orient';
import { forward, pictureRows, type RowSource } from './stages/rows';
import type { RgbaImage } from './types';

/*
 * quality=auto and format=best in a run (docs/decisions.md, "quality=auto"): the encoder's input is
 * read once for its sample (quality/sample.ts), qualities are tried on the sample with each
 * candidate format's own encoder and decoder (quality/sample-trial.ts), and each candidate is then
 * encoded once at its predicted quality, scored (quality/auto-plan.ts says how) and corrected at
 * most once (quality/auto-quality.ts). format=best keeps the smallest result that meets the target.
 * A result that may still be replaced is held in memory and handed to storage once it is final, so
 * nothing of a discarded result is ever stored.
 */

/** What the run (pipeline.ts) lends the auto run: its passes over the input, metered as every pass is. */
export interface AutoKit {
  /**
   * The encoder's input for `plan` read once more (decode, colour and every stage; stored rows with
   * plan.orientation still to apply where the encoder places them), the meter sampling `beside()`
   * (bytes this run holds apart from the pass) at each band.
   */
  input(plan: ProcessingPlan, beside: () => number): Promise<RowSource>;
  /** `plan`'s picture read once more and encoded at `quality` into `sink`. */
  encode(plan: ProcessingPlan, quality: number, sink: ResultSink, beside: () => number): Promise<void>;
  /** A source sampled by the meter at each band, with `beside()`. */
  metered(source: RowSource, beside: () => number): RowSource;
  /** Records what is held now (bytes outside the codecs' memories, which the meter counts itself). */
  held(bytes: number): void;
  /** Times a phase of the run (diagnostic headers). */
  step<T>(name: string, job: () => Promise<T>): Promise<T>;
  /** The run's turn before its result is sent to storage. */
  pace?: () => Promise<void>;
}

export interface AutoOutcome {
  plan: ProcessingPlan;
  size: number;
  quality: number;
  score: QualityScore;
}

/** The result kept so far, and whether it met its target. */
type Kept = AutoOutcome & { made: Made; met: boolean };

/** A candidate's result at `quality`: held in memory until it is final, or streamed straight into storage. */
interface Made {
  quality: number;
  sink: ResultSink;
  held: ResultBuffer | null;
}

/**
 * Chooses and writes the result of `plans` (one per candidate format, each with plan.auto; the
 * first plan the sample is read with) into `target`.
 */
export async function runAuto(plans: ProcessingPlan[], kit: AutoKit, target: ResultTarget): Promise<AutoOutcome> {
  const held = new Set<ResultBuffer>();
  let sampleHeld = 0;
  const beside = () => sampleHeld + [...held].reduce((sum, buffer) => sum + buffer.heldBytes, 0);

  const reader = samplePlan(plans);
  const layout = sampleLayout(reader.output.width, reader.output.height);
  sampleHeld = 2 * sampleBytes(layout);
  const { mosaic, traits, transparent } = await kit.step('auto.sample', () => readSample(reader, layout, kit, beside));
  sampleHeld = sampleBytes(layout);
  // A format without alpha (JPEG) is a candidate only where the picture turned out opaque.
  const candidates = plans.filter((plan) => plans.length === 1 || !transparent || FORMATS[plan.outputFormat].supportsAlpha);
  const pixels = reader.output.width * reader.output.height;

  const trials = new Map<AutoFormat, Trials>();
  await kit.step('auto.trials', async () => {
    for (const plan of candidates) {
      const format = plan.outputFormat as AutoFormat;
      const formatTraits = { alpha: traits.alpha && !plan.flatten, grey: traits.grey };
      const tried = new Trials(sampleTrial(format, mosaic, formatTraits, pixels), () => kit.held(beside() + sampleBytes(layout)));
      await tried.predict(plan.auto!.target + marginOf(plan), startOf(plan));
      trials.set(format, tried);
    }
  });
  // The likely smallest first: a later candidate's result that outgrows it is given up as it is made.
  const ordered = [...candidates].sort((a, b) => trials.get(a.outputFormat as AutoFormat)!.predictedBytes - trials.get(b.outputFormat as AutoFormat)!.predictedBytes);

  let best: Kept | null = null;
  for (const plan of ordered) {
    const format = plan.outputFormat as AutoFormat;
    const auto = plan.auto!;
    const tried = trials.get(format)!;
    const cap: number = best?.met ? best.size : Infinity;
    const settings = AUTO_QUALITY[format];
    const release = (made: Made) => {
      if (made.held) held.delete(made.held);
    };
    let chosen: AutoQualityResult<Made>;
    try {
      chosen = await autoQuality<Made>(
        {
          sampleScore: (quality) => tried.score(quality),
          encode: (quality) => kit.step('auto.encode', () => makeResult(plan, quality, cap, kit, target, held, beside)),
          score: (made) => kit.step('auto.check', () => checkResult(plan, made, layout, mosaic, traits, tried, kit, beside)),
          discard: release,
        },
        {
          target: auto.target,
          sampleMargin: marginOf(plan),
          overshoot: settings.overshoot,
          // A picture scored on its sample is encoded once: a second encode would take auto past its time.
          corrects: auto.check === 'picture',
          search: { start: startOf(plan), max: AUTO_MAX_QUALITY },
        },
      );
    } catch (error) {
      if (error instanceof LargerThanKept) continue;
      throw error;
    }
    const size = chosen.result.sink.length;
    const met = chosen.score >= auto.target;
    const outcome: Kept = { plan, size, quality: chosen.quality, score: scoreOf(auto, chosen.score), made: chosen.result, met };
    if (!best || (met && !best.met) || (met === best.met && size < best.size)) {
      if (best) release(best.made);
      best = outcome;
    } else {
      release(chosen.result);
    }
  }
  if (!best) throw new Error('quality=auto: no candidate made a result');
  const { made, plan } = best;
  if (made.held) {
    // The result is final: into storage it goes, whole, without a copy.
    const sink = target.open(plan.outputFormat, made.held.length, kit.pace);
    sink.writeOwned(made.held.bytes());
    await sink.drain();
  }
  return { plan, size: best.size, quality: best.quality, score: best.score };
}

/** Points above the target the sample is asked for: more where the one encode is not corrected. */
function marginOf(plan: ProcessingPlan): number {
  const settings = AUTO_QUALITY[plan.outputFormat as AutoFormat];
  return plan.auto!.check === 'picture' ? settings.sampleMargin : settings.largeMargin;
}

/** Where the search on the sample starts: the format's usual answer, moved for another target. */
function startOf(plan: ProcessingPlan): number {
  const settings = AUTO_QUALITY[plan.outputFormat as AutoFormat];
  const start = settings.start + (plan.auto!.target - settings.target) / FIRST_SLOPE;
  return Math.min(AUTO_MAX_QUALITY, Math.max(QUALITY_MIN, Math.round(start)));
}

function scoreOf({ target, measuredOn }: AutoPlan, value: number): QualityScore {
  return { metric: 'ssimulacra2', value, target, measuredOn };
}

/** The plan the sample is read with: one that keeps alpha (not JPEG's, which flattens) where there is a choice. */
function samplePlan(plans: ProcessingPlan[]): ProcessingPlan {
  return plans.find((plan) => !plan.flatten) ?? plans[0];
}

/** The sample pass: the mosaic of the encoder's input as shown, its traits, and whether any pixel was transparent. */
async function readSample(plan: ProcessingPlan, layout: SampleLayout, kit: AutoKit, beside: () => number) {
  const source = await kit.input(plan, beside);
  const traits = { alpha: source.alpha, grey: source.grey };
  let transparent = false;
  const watched: RowSource = {
    ...forward(source),
    read: async () => {
      const band = await source.read();
      if (band && traits.alpha && !transparent) transparent = hasTransparency(band.data, band.rows * source.width);
      return band;
    },
  };
  const mosaic = await collectSample(watched, layout, plan.orientInEncoder ? plan.orientation : 1);
  return { mosaic, traits, transparent };
}

function hasTransparency(rgba: Uint8Array, pixels: number): boolean {
  for (let i = 3; i < pixels * 4; i += 4) if (rgba[i] !== 255) return true;
  return false;
}

/** A candidate's trials on the sample: memoised, with the prediction and the bytes it predicts. */
class Trials {
  private readonly tried = new Map<number, { score: number; bytes: number }>();
  predictedQuality = 0;
  predictedBytes = 0;

  constructor(
    private readonly trial: (quality: number) => Promise<{ score: number; bytes: number }>,
    private readonly sampled: () => void,
  ) {}

  async run(quality: number): Promise<{ score: number; bytes: number }> {
    let result = this.tried.get(quality);
    if (!result) {
      result = await this.trial(quality);
      this.sampled();
      this.tried.set(quality, result);
    }
    return result;
  }

  async score(quality: number): Promise<number> {
    return (await this.run(quality)).score;
  }

  async predict(target: number, start: number): Promise<void> {
    const { quality } = await searchQuality((q) => this.score(q), target, { start, maxTrials: 5, max: AUTO_MAX_QUALITY });
    this.predictedQuality = quality;
    this.predictedBytes = (await this.run(quality)).bytes;
  }
}

/** A result that grew past the smallest one kept so far (format=best): not worth finishing. */
class LargerThanKept extends Error {}

/**
 * The picture encoded at `quality`: held (ResultBuffer at the result's bound), or streamed into
 * `target` where nothing can replace it. A format=best candidate is given the size of the smallest
 * result kept so far as its cap (its encoder stops there, as a capped result does: FILE_TOO_LARGE).
 */
async function makeResult(plan: ProcessingPlan, quality: number, cap: number, kit: AutoKit, target: ResultTarget, held: Set<ResultBuffer>, beside: () => number): Promise<Made> {
  const bound = FORMATS[plan.outputFormat].resultBound(encodeFacts({ ...plan, quality }));
  if (!plan.auto!.holdsResult) {
    const sink = target.open(plan.outputFormat, bound, kit.pace);
    await kit.encode(plan, quality, sink, beside);
    return { quality, sink, held: null };
  }
  const capped = cap < bound;
  const buffer = new ResultBuffer(capped ? cap : bound);
  held.add(buffer);
  try {
    await kit.encode(capped ? { ...plan, maxResultBytes: cap } : plan, quality, buffer, () => beside() - buffer.heldBytes);
  } catch (error) {
    held.delete(buffer);
    if (capped && error instanceof AppError && error.code === 'FILE_TOO_LARGE') throw new LargerThanKept();
    throw error;
  }
  return { quality, sink: buffer, held: buffer };
}

/** The result's score against the encoder's input, as the plan says (auto-plan.ts). */
async function checkResult(
  plan: ProcessingPlan,
  made: Made,
  layout: SampleLayout,
  mosaic: RgbaImage & { data: Uint8Array },
  traits: { alpha: boolean; grey: boolean },
  tried: Trials,
  kit: AutoKit,
  beside: () => number,
): Promise<number> {
  const { check } = plan.auto!;
  if (check === 'trial') return tried.score(made.quality);
  const format = FORMATS[plan.outputFormat];
  const file = format.read(made.held!.bytes());
  const decode = async (region: Region | null) => kit.metered(await file.decode({ shrink: 1, region }), beside);
  if (check === 'sample') {
    // A result whose regions decode apart (an AVIF grid) is read only where the sample's tiles lie.
    const tiles = format.decodesRegionsApart ? await collectTiles(decode, layout) : await collectSample(await decode(null), layout);
    kit.held(beside() + sampleBytes(layout));
    const rows = { model: 'rgba' as const, alpha: traits.alpha && !plan.flatten, grey: false };
    return scoreRows(pictureRows(mosaic, rows), pictureRows(tiles, rows));
  }
  const decoded = await decode(null);
  const input = await kit.input(plan, beside);
  const original = plan.orientInEncoder ? orientRows(input, plan.orientation) : input;
  return scoreRows(original, decoded);
}
