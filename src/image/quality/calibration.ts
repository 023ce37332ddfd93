import type { ImageFormat } from '../types';

/*
 * quality=auto's settings per format, from bench/quality-calibration.ts on the repository's photos
 * at 1-3 MP (docs/decisions.md, "quality=auto"): the default target is the lowest SSIMULACRA 2 score
 * q80 gave them (the low end of what q80 delivers: a hard photo at q80), and quality_target may ask
 * for another within QUALITY_TARGET_RANGE.
 */

export interface AutoQualitySettings {
  /** The default target score. */
  target: number;
  /** Points the sample is asked for above the target (auto-quality.ts). */
  sampleMargin: number;
  /** A whole-picture result this far above the target is encoded once more, lower; Infinity: never. */
  overshoot: number;
}

export const AUTO_QUALITY: Record<Exclude<ImageFormat, 'png'>, AutoQualitySettings> = {
  // Lowest q80 scores of the eleven photos (bench/quality-calibration.ts, 2026-11-28): JPEG 72.53
  // (a forest), WebP 64.60 (a sky), AVIF 71.57 (a dark lake).
  jpeg: { target: 72.5, sampleMargin: 0.5, overshoot: 2 },
  webp: { target: 64.6, sampleMargin: 0.5, overshoot: 2 },
  // A second AVIF encode would take auto past 1.5x the time of q80: never corrected downwards.
  avif: { target: 71.5, sampleMargin: 0.5, overshoot: Infinity },
};

/**
 * quality_target's range: 30 (SSIMULACRA 2's "low quality", obvious artefacts) to 90 ("visually
 * lossless"); above 90 the encoders reach q100 on many photos without meeting it.
 */
export const QUALITY_TARGET_RANGE = { min: 30, max: 90 } as const;
