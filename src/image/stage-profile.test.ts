import { describe, expect, it } from 'vitest';
import { corpus } from '../../test/support/image-testing';
import { processImage } from './pipeline';

const LIMITS = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 1 << 30 };

describe('a profiled run', () => {
  it('says how long each of its stages took, adding up to no more than the run', async () => {
    const input = await corpus('jpeg/orientation/landscape_6.jpg');
    const started = performance.now();
    const result = await processImage(input, { steps: [{ op: 'resize', width: 301, keepAspectRatio: true }], format: 'png', quality: 80 }, LIMITS, { profile: true });
    const wallMs = performance.now() - started;
    const stages = result.stagesMs!;
    // Pulled in pipeline order (this file has an ICC profile and orientation 6).
    expect(Object.keys(stages)).toEqual(['decode', 'colour', 'resize', 'orient', 'encode', 'copies', 'turns']);
    for (const ms of Object.values(stages)) expect(ms).toBeGreaterThanOrEqual(0);
    const { copies, ...own } = stages;
    expect(copies).toBeLessThanOrEqual(stages.encode + stages.decode);
    expect(Object.values(own).reduce((a, b) => a + b)).toBeLessThanOrEqual(wallMs);
  });

  it('times a smart-cropped thumbnail stage by stage, the cut taken from its held picture', async () => {
    const input = await corpus('photos/photo-12mp.jpg');
    const operation = { steps: [{ op: 'resize', width: 400, height: 400, keepAspectRatio: true, fit: 'cover', position: { kind: 'smart', strategy: 'attention' } }], format: 'webp', quality: 80 } as const;
    const started = performance.now();
    const result = await processImage(input, operation, LIMITS, { profile: true });
    const wallMs = performance.now() - started;
    const stages = result.stagesMs!;
    expect(Object.keys(stages)).toEqual(['decode', 'resize', 'cut', 'smart-crop', 'encode', 'copies', 'turns']);
    for (const ms of Object.values(stages)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(stages.decode).toBeGreaterThan(0);
    expect(stages.encode).toBeGreaterThan(0);
    const { copies, ...own } = stages;
    expect(Object.values(own).reduce((a, b) => a + b)).toBeLessThanOrEqual(wallMs);
  });

  it('times a decode and an encode of a photo', async () => {
    // (A clock of millisecond steps: this small file's stages above can take less than one.)
    const input = await corpus('photos/photo-1mp.jpg');
    const result = await processImage(input, { steps: [], format: 'png', quality: 80 }, LIMITS, { profile: true });
    expect(result.stagesMs!.decode).toBeGreaterThan(0);
    expect(result.stagesMs!.encode).toBeGreaterThan(0);
  });

  it('is not taken unless asked for', async () => {
    const input = await corpus('jpeg/orientation/landscape_6.jpg');
    const result = await processImage(input, { steps: [], format: 'webp', quality: 80 }, LIMITS);
    expect(result.stagesMs).toBeUndefined();
  });
});
