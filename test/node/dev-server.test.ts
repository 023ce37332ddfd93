/// <reference types="node" />
import { afterAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from './dev-server';

/** process.kill(-pgid, 0) throws ESRCH once no process of the group exists (zombies aside). */
function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

describe('startDevServer', () => {
  let server: DevServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('starts npm run dev (migrations, seed, wrangler dev), answers HTTP, and stop() leaves no process behind', async () => {
    server = await startDevServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const res = await fetch(`${server.url}/`);
    expect(res.status).toBeGreaterThanOrEqual(100);
    await res.body?.cancel();

    const out = server.output();
    expect(out).toContain('imgk_demofree000000000000000000000000');
    expect(out).toContain('imgk_demopro0000000000000000000000000');
    const groups = server.groups();
    expect(groups).toHaveLength(2); // dev.ts and wrangler dev (with workerd)
    for (const g of groups) expect(groupGone(g)).toBe(false);

    await server.stop();
    for (const g of groups) expect(groupGone(g), `process group ${g} still exists`).toBe(true);
    await expect(fetch(`${server.url}/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  });
});

describe('npm run dev options', () => {
  it('takes --rtt <far>/<near>, or SIMULATED_RTT_MS, for the stores\' simulated distance', async () => {
    const { parseDevArgs } = await import('../../src/cli/dev.ts');
    const vars = (values: Record<string, string> = {}) => values as NodeJS.ProcessEnv;
    expect(parseDevArgs(['--rtt', '100/5'], vars()).rtt).toBe('100/5');
    expect(parseDevArgs(['--rtt=0/0', '--', '--ip', '127.0.0.1'], vars())).toMatchObject({ rtt: '0/0', forwarded: ['--ip', '127.0.0.1'] });
    expect(parseDevArgs([], vars({ SIMULATED_RTT_MS: '200/10' })).rtt).toBe('200/10');
    expect(parseDevArgs(['--rtt', '50/1'], vars({ SIMULATED_RTT_MS: '200/10' })).rtt).toBe('50/1');
    expect(parseDevArgs([], vars()).rtt).toBeUndefined();
    expect(() => parseDevArgs(['--rtt', '100'], vars())).toThrow(/--rtt must be/);
    expect(() => parseDevArgs([], vars({ SIMULATED_RTT_MS: 'fast' }))).toThrow(/SIMULATED_RTT_MS must be/);
  });
});
