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
  /** Points the sample is asked for above the target (auto-quality.ts). */
  sampleMargin: number;
  /**
   * A result scored whole this far above the target is encoded once more, lower; Infinity: never.
   * (Results scored on the sample are never corrected downwards: a second encode of a large
   * picture would take auto past the time it may take.)
   */
  overshoot: number;
}

export const AUTO_QUALITY: Record<AutoFormat, AutoQualitySettings> = {
  // Lowest q80 scores of the eleven photos (bench/quality-calibration.ts, 2026-11-28): JPEG 72.53
  // (a forest), WebP 64.60 (a sky), AVIF 71.57 (a dark lake).
  jpeg: { target: 72.5, sampleMargin: 0.5, overshoot: 2 },
  webp: { target: 64.6, sampleMargin: 0.5, overshoot: 2 },
  // A second AVIF encode would take auto past 1.5x the time of q80: never corrected downwards.
  avif: { target: 71.5, sampleMargin: 0.5, overshoot: Infinity },
};

/**
 * format=best's one target for all three formats (each format's own default is what q80 gives a
 * hard photo in that format; comparing files of different formats needs one bar): the highest of
 * the three, so that the file kept looks no worse than a hard photo at q80 in any of them.
 */
export const BEST_TARGET = Math.max(...AUTO_FORMATS.map((format) => AUTO_QUALITY[format].target));

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

