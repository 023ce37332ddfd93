/** Operator settings, read from Worker vars (wrangler.toml [vars] or the dashboard). */
export interface Settings {
  resultRetentionMs: number;
  maxInputPixels: number;
  maxOutputPixels: number;
  /** Base of download links; null = the host the request came to. */
  siteUrl: string | null;
}

export interface SettingsSource {
  RESULT_RETENTION_HOURS?: string;
  MAX_INPUT_MEGAPIXELS?: string;
  MAX_OUTPUT_MEGAPIXELS?: string;
  SITE_URL?: string;
}

const DEFAULTS = { retentionHours: 24, inputMegapixels: 40, outputMegapixels: 40 };

function positiveNumber(raw: string | undefined, fallback: number): number {
  const value = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function readSettings(vars: SettingsSource): Settings {
  return {
    resultRetentionMs: positiveNumber(vars.RESULT_RETENTION_HOURS, DEFAULTS.retentionHours) * 3_600_000,
    maxInputPixels: Math.floor(positiveNumber(vars.MAX_INPUT_MEGAPIXELS, DEFAULTS.inputMegapixels) * 1_000_000),
    maxOutputPixels: Math.floor(positiveNumber(vars.MAX_OUTPUT_MEGAPIXELS, DEFAULTS.outputMegapixels) * 1_000_000),
    siteUrl: vars.SITE_URL?.trim() ? vars.SITE_URL.trim().replace(/\/+$/, '') : null,
  };
}
