/// <reference types="node" />
import { describe, expect, it } from 'vitest';
import { wranglerEnv } from '../../src/cli/d1';

// (The Worker's generated types add its vars to NodeJS.ProcessEnv.)
const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;

describe('wranglerEnv', () => {
  it("turns wrangler dev's local trace store off unless the caller turned it on", () => {
    expect(wranglerEnv(env({ PATH: '/usr/bin' })).X_LOCAL_OBSERVABILITY).toBe('false');
    expect(wranglerEnv(env({ PATH: '/usr/bin', X_LOCAL_OBSERVABILITY: 'true' })).X_LOCAL_OBSERVABILITY).toBe('true');
  });

  it('puts the project binaries first and sends no telemetry', () => {
    const result = wranglerEnv(env({ PATH: '/usr/bin' }));
    expect(result.PATH?.split(':').at(-1)).toBe('/usr/bin');
    expect(result.PATH?.split(':')[0]).toMatch(/node_modules\/\.bin$/);
    expect(result.WRANGLER_SEND_METRICS).toBe('false');
  });
});
