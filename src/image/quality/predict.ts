import { FORMATS } from '../formats/index';
import { pictureRows, type RowSource } from '../stages/rows';
import type { ImageFormat, RgbaImage } from '../types';
import { collectSample, sampleBytes, sampleLayout, type SampleLayout } from './sample';
import { sampleTrial } from './sample-trial';
import { scoreRows, scoreRowsBytes } from './score-rows';
import { searchQuality, type SearchOptions } from './search';

/*
 * The two halves of quality=auto that read pixels, as pure functions over row sources (the run
 * supplies them; auto-quality.ts puts them together): the prediction reads the encoder's input
 * once, keeps its sample and tries qualities on it; the check scores a result against that sample,
 * its tiles cut from the result decoded (the whole result scored against the input read again is
 * scoreRows itself).
 */

export interface Prediction {
  /** The lowest quality the sample says meets the target (plus the margin). */
  quality: number;
  /** Each quality tried on the sample and its score. */
  scores: Map<number, number>;
  /** The sample (held until the check) and where its tiles come from. */
  sample: RgbaImage & { data: Uint8Array };
  layout: SampleLayout;
}

export interface PredictOptions {
  /** Score to reach; the sample is asked for `target + sampleMargin`. */
  target: number;
  sampleMargin: number;
  search?: Partial<SearchOptions>;
}

/** Reads `source` (the encoder's input; closed at the end) for its sample and predicts the quality for `format`. */
export async function predictQuality(source: RowSource, format: ImageFormat, options: PredictOptions): Promise<Prediction> {
  const { width, height, alpha } = source;
  const layout = sampleLayout(width, height);
  const sample = await collectSample(source, layout);
  const trial = sampleTrial(format, sample, { alpha, grey: source.grey }, width * height);
  const search = { start: 80, maxTrials: 5, ...options.search };
  const { quality, scores } = await searchQuality(async (q) => (await trial(q)).score, options.target + options.sampleMargin, search);
  return { quality, scores, sample, layout };
}

/**
 * The score of a result (a file of `format`) on the sample's tiles: the result decoded, the same
 * tiles cut from it as it streams, scored against the sample. What a whole-picture score would be
 * where scoring the whole picture costs too much (docs/decisions.md, "quality=auto").
 */
export async function scoreOnSample(result: Uint8Array, format: ImageFormat, prediction: Pick<Prediction, 'sample' | 'layout'>, alpha: boolean): Promise<number> {
  const decoded = await FORMATS[format].read(result).decode({ shrink: 1, region: null });
  const tiles = await collectSample(decoded, prediction.layout);
  const traits = { model: 'rgba' as const, alpha, grey: false };
  return scoreRows(pictureRows(prediction.sample, traits), pictureRows(tiles, traits));
}

/**
 * Bytes the prediction and the check hold beside the run's own steps, for the memory plan: the
 * sample (held from the first read to the check), the tiles cut from the result and the metric's
 * memory for the sample's width; the encoders and decoders of the trials are the format's own, at
 * the sample's size (their decodeCost and encodeCost). Scoring the whole result instead holds
 * scoreRowsBytes(width, height) and a second reading of the input.
 */
export function sampleCheckBytes(width: number, height: number): number {
  const layout = sampleLayout(width, height);
  return 2 * sampleBytes(layout) + scoreRowsBytes(layout.size.width, layout.size.height);
}
