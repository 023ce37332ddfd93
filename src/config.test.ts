import { describe, expect, it } from 'vitest';
import { readSettings } from './config';

describe('readSettings', () => {
  it('defaults to 24 h retention and 40 megapixels for every plan', () => {
    expect(readSettings({})).toEqual({
      resultRetentionMs: 86_400_000,
      pixelLimits: { free: { maxInputPixels: 40e6, maxOutputPixels: 40e6 }, pro: { maxInputPixels: 40e6, maxOutputPixels: 40e6 } },
      siteUrl: null,
      diagnosticHeaders: false,
    });
  });

  it('turns the diagnostic headers on only for DIAGNOSTIC_HEADERS=true', () => {
    expect(readSettings({ DIAGNOSTIC_HEADERS: 'true' }).diagnosticHeaders).toBe(true);
    expect(readSettings({ DIAGNOSTIC_HEADERS: 'yes' }).diagnosticHeaders).toBe(false);
  });

  it('takes a general pixel limit and per-plan overrides', () => {
    const settings = readSettings({ MAX_INPUT_MEGAPIXELS: '16', MAX_INPUT_MEGAPIXELS_PRO: '24.5', MAX_OUTPUT_MEGAPIXELS_FREE: '8' });
    expect(settings.pixelLimits).toEqual({
      free: { maxInputPixels: 16e6, maxOutputPixels: 8e6 },
      pro: { maxInputPixels: 24.5e6, maxOutputPixels: 40e6 },
    });
  });

  it('ignores values that are not positive numbers and trims SITE_URL', () => {
    const settings = readSettings({ RESULT_RETENTION_HOURS: 'soon', MAX_INPUT_MEGAPIXELS: '-3', SITE_URL: ' https://img.example.com/ ' });
    expect(settings.resultRetentionMs).toBe(86_400_000);
    expect(settings.pixelLimits.free.maxInputPixels).toBe(40e6);
    expect(settings.siteUrl).toBe('https://img.example.com');
  });
});
