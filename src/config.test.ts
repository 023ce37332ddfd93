import { describe, expect, it } from 'vitest';
import { readSettings } from './config';

describe('readSettings', () => {
  it('defaults to 24 h retention, 50 megapixels and a 100 MB memory budget for every plan', () => {
    const limits = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };
    expect(readSettings({})).toEqual({
      resultRetentionMs: 86_400_000,
      pixelLimits: { free: limits, pro: limits },
      siteUrl: null,
      diagnosticHeaders: false,
    });
  });

  it('takes the memory budget in MB', () => {
    expect(readSettings({ MEMORY_BUDGET_MB: '512' }).pixelLimits.pro.memoryBudgetBytes).toBe(512 * 2 ** 20);
  });

  it('turns the diagnostic headers on only for DIAGNOSTIC_HEADERS=true', () => {
    expect(readSettings({ DIAGNOSTIC_HEADERS: 'true' }).diagnosticHeaders).toBe(true);
    expect(readSettings({ DIAGNOSTIC_HEADERS: 'yes' }).diagnosticHeaders).toBe(false);
  });

  it('takes a general pixel limit and per-plan overrides', () => {
    const settings = readSettings({ MAX_INPUT_MEGAPIXELS: '16', MAX_INPUT_MEGAPIXELS_PRO: '24.5', MAX_OUTPUT_MEGAPIXELS_FREE: '8' });
    expect(settings.pixelLimits).toEqual({
      free: { maxInputPixels: 16e6, maxOutputPixels: 8e6, memoryBudgetBytes: 100 * 2 ** 20 },
      pro: { maxInputPixels: 24.5e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 },
    });
  });

  it('ignores values that are not positive numbers and trims SITE_URL', () => {
    const settings = readSettings({ RESULT_RETENTION_HOURS: 'soon', MAX_INPUT_MEGAPIXELS: '-3', SITE_URL: ' https://img.example.com/ ' });
    expect(settings.resultRetentionMs).toBe(86_400_000);
    expect(settings.pixelLimits.free.maxInputPixels).toBe(50e6);
    expect(settings.siteUrl).toBe('https://img.example.com');
  });
});
