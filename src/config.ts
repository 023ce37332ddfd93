import type { PixelLimits } from './image/operations';
import type { PlanName } from './plans';

/** Operator settings, read from Worker vars (wrangler.toml [vars] or the dashboard). */
export interface Settings {
  resultRetentionMs: number;
  /** Largest input (by its header) and resize output, per plan. */
  pixelLimits: Record<PlanName, PixelLimits>;
  /** Base of download links; null = the host the request came to. */
  siteUrl: string | null;
  /** Processing answers carry X-Pipeline-Peak-Bytes (for `npm run bench`); off by default. */
  diagnosticHeaders: boolean;
}

export interface SettingsSource {
  RESULT_RETENTION_HOURS?: string;
  MAX_INPUT_MEGAPIXELS?: string;
  MAX_OUTPUT_MEGAPIXELS?: string;
  MAX_INPUT_MEGAPIXELS_FREE?: string;
  MAX_INPUT_MEGAPIXELS_PRO?: string;
  MAX_OUTPUT_MEGAPIXELS_FREE?: string;
  MAX_OUTPUT_MEGAPIXELS_PRO?: string;
  MEMORY_BUDGET_MB?: string;
  SITE_URL?: string;
  DIAGNOSTIC_HEADERS?: string;
}

/**
 * A deployed isolate has 128 MB; 28 MB is left for the Worker's own code and heap, and the pipeline
 * runs in an isolate share the rest (src/admission). Rows stream through the pipeline, so the pixel
 * limit is a policy, imgproxy's default of 50 MP; what a format or an operation cannot fit is
 * refused by the memory guard (image/memory-plan.ts) with the largest size that fits.
 */
const DEFAULTS = { retentionHours: 24, megapixels: 50, memoryBudgetMb: 100 };

function positiveNumber(raw: string | undefined, fallback: number): number {
  const value = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const pixels = (megapixels: number) => Math.floor(megapixels * 1_000_000);

export function readSettings(vars: SettingsSource): Settings {
  const input = positiveNumber(vars.MAX_INPUT_MEGAPIXELS, DEFAULTS.megapixels);
  const output = positiveNumber(vars.MAX_OUTPUT_MEGAPIXELS, DEFAULTS.megapixels);
  const memoryBudgetBytes = Math.floor(positiveNumber(vars.MEMORY_BUDGET_MB, DEFAULTS.memoryBudgetMb) * 2 ** 20);
  return {
    resultRetentionMs: positiveNumber(vars.RESULT_RETENTION_HOURS, DEFAULTS.retentionHours) * 3_600_000,
    pixelLimits: {
      free: {
        maxInputPixels: pixels(positiveNumber(vars.MAX_INPUT_MEGAPIXELS_FREE, input)),
        maxOutputPixels: pixels(positiveNumber(vars.MAX_OUTPUT_MEGAPIXELS_FREE, output)),
        memoryBudgetBytes,
      },
      pro: {
        maxInputPixels: pixels(positiveNumber(vars.MAX_INPUT_MEGAPIXELS_PRO, input)),
        maxOutputPixels: pixels(positiveNumber(vars.MAX_OUTPUT_MEGAPIXELS_PRO, output)),
        memoryBudgetBytes,
      },
    },
    siteUrl: vars.SITE_URL?.trim() ? vars.SITE_URL.trim().replace(/\/+$/, '') : null,
    diagnosticHeaders: vars.DIAGNOSTIC_HEADERS?.trim().toLowerCase() === 'true',
  };
}
