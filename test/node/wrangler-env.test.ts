/// <reference types="node" />
import { describe, expect, it } from 'vitest';
import { wranglerEnv } from '../../src/cli/d1';

describe('wranglerEnv', () => {
  it("turns wrangler dev's local trace store off unless the caller turned it on", () => {
    expect(wranglerEnv({ PATH: '/usr/bin' }).X_LOCAL_OBSERVABILITY).toBe('false');
    expect(wranglerEnv({ PATH: '/usr/bin', X_LOCAL_OBSERVABILITY: 'true' }).X_LOCAL_OBSERVABILITY).toBe('true');
  });

  it('puts the project binaries first and sends no telemetry', () => {
    const env = wranglerEnv({ PATH: '/usr/bin' });
    expect(env.PATH?.split(':').at(-1)).toBe('/usr/bin');
    expect(env.PATH?.split(':')[0]).toMatch(/node_modules\/\.bin$/);
    expect(env.WRANGLER_SEND_METRICS).toBe('false');
  });
});
