import type { ImageFormat } from '../types';

/*
 * quality=auto's settings per format, from bench/quality-calibration.ts on the repository's photos
 * at 1-3 MP (docs/decisions.md, "quality=auto"): the default target is the lowest SSIMULACRA 2 score
 * q80 gave them (the low end of what q80 delivers: a hard photo at q80), and quality_target may ask
 * for another within QUALITY_TARGET_RANGE.
 */

/** The formats quality=auto chooses a quality for (PNG is lossless), in format=best's order of preference on a tie. */
export const AUTO_FORMATS = ['avif', 'webp', 'jpeg'] as const satisfies readonly ImageFormat[];
export type AutoFormat = (typeof AUTO_FORMATS)[number];

export function isAutoFormat(format: ImageFormat): format is AutoFormat {
  return (AUTO_FORMATS as readonly ImageFormat[]).includes(format);
}

export interface AutoQualitySettings {
  /** The default target score. */
  target: number;
  /**
   * The quality the search on the sample starts from at the default target (the median of what the
   * calibration photos took): a start near the answer saves trials. Another target moves it by
   * the curve's typical slope (search.ts FIRST_SLOPE).
   */
  start: number;
  /** Points the sample is asked for above the target (auto-quality.ts), where the result is scored whole and a miss is corrected. */
  sampleMargin: number;
  /**
   * The same for a picture scored on its sample (larger than WHOLE_SCORE_MAX_PIXELS), which is
   * encoded once: the spread of the sample's score against the result's own tiles.
   */
  largeMargin: number;
  /**
   * A result scored whole this far above the target is encoded once more, lower; Infinity: never.
   * (Results scored on the sample are never corrected downwards: a second encode of a large
   * picture would take auto past the time it may take.)
   */
  overshoot: number;
}

export const AUTO_QUALITY: Record<AutoFormat, AutoQualitySettings> = {
  // The lowest q80 score of the thirteen photos (bench/quality-calibration.ts): the 1 MP forest.
  jpeg: { target: 68, start: 68, sampleMargin: 0.5, largeMargin: 0.5, overshoot: 2 },
  // The lowest q80 score (a sky). No target keeps DSSIM's worst photo no worse within q80's bytes.
  webp: { target: 64.6, start: 78, sampleMargin: 0.5, largeMargin: 3, overshoot: 2 },
  // Above the lowest q80 score (71.5, a dark lake): the target that keeps DSSIM's worst photo no worse.
  avif: { target: 76.5, start: 76, sampleMargin: 0.5, largeMargin: 0.5, overshoot: 2 },
};

/**
 * A candidate's target in format=best, as in quality=auto for its format: `quality_target`, else the
 * format's default. format=best is then the smallest of what quality=auto gives in each format.
 */
export function autoTargetOf(format: AutoFormat, qualityTarget: number | undefined): number {
  return qualityTarget ?? AUTO_QUALITY[format].target;
}

/**
 * The highest quality auto chooses, and the one its memory plan counts results at: q100's white
 * noise bounds (a held WebP or AVIF result) would take a 12 MP WebP run into libwebp's slower
 * low-memory mode. Near-lossless targets that need more are reported as the score reached.
 */
export const AUTO_MAX_QUALITY = 95;

/**
 * quality_target's range: 30 (SSIMULACRA 2's "low quality", obvious artefacts) to 90 ("visually
 * lossless"); above 90 the encoders reach q100 on many photos without meeting it.
 */
export const QUALITY_TARGET_RANGE = { min: 30, max: 90 } as const;

/**
 * Results of at most this many pixels are scored whole (the reported score is the whole picture's);
 * larger ones on the sample's tiles: scoring a 12 MP result whole takes about 2 s, several times
 * what encoding it takes (docs/performance.md, "quality=auto").
 */
export const WHOLE_SCORE_MAX_PIXELS = 2048 * 2048;

