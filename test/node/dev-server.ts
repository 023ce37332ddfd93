/// <reference types="node" />
/**
 * Starts the real local dev stack for end-to-end tests:
 *   node src/cli/dev.ts -- --port <free port> --ip 127.0.0.1 --persist-to <temp dir> --inspector-port <free port>
 * i.e. schema + demo seed + `wrangler dev`, exactly as `npm run dev` does.
 *
 *   const server = await startDevServer();
 *   const res = await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${DEMO_ACCOUNTS[0].key}` } });
 *   await server.stop();
 *
 * dev.ts runs in its own process group and puts wrangler dev (with workerd) in another;
 * `stop()` sends SIGTERM (dev.ts forwards it), then SIGKILL to both groups after a grace
 * period, and resolves only when no process of either group is left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN_DIR, PROJECT_ROOT, wranglerEnv } from '../../src/cli/d1';
import { groupAlive, signalGroup, waitGroupGone } from '../../src/cli/process-group';

export { DEMO_ACCOUNTS } from '../../src/cli/seed';

export interface DevServerOptions {
  /** Port for wrangler dev; a free one by default. */
  port?: number;
  /** Local persistence directory; a fresh temp directory (removed by stop()) by default. */
  persistTo?: string;
  /** How long to wait for the server to answer `GET /` (default 90 s). */
  timeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL in stop() (default 5 s). */
  graceMs?: number;
  /** Extra arguments for wrangler dev (e.g. ['--var', 'SITE_URL:https://example.test']). */
  wranglerArgs?: string[];
  /** Echo the server's output to this process's stderr (default: $DEV_SERVER_VERBOSE set). */
  verbose?: boolean;
}

export interface DevServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  persistTo: string;
  /** Process group of dev.ts (its pid). */
  pid: number;
  /** Every process group started: dev.ts and, once known, wrangler dev. */
  groups(): number[];
  /** Everything the server printed so far (stdout and stderr interleaved, last 200 kB). */
  output(): string;
  /** Stops everything; idempotent. */
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Waits until process.kill(-pgid, 0) fails with ESRCH (the group no longer exists, zombies included). */
async function waitGroupReaped(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const OUTPUT_LIMIT = 200_000;

/**
 * Tries again, on other free ports, when wrangler finds its address taken: a port that was free a
 * moment ago can be taken before wrangler binds it by any process picking an ephemeral port, such
 * as another test's workerd starting at the same time (seen once in a CI run of the whole suite).
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(options);
    } catch (error) {
      const taken = error instanceof Error && error.message.includes('Address already in use');
      if (!taken || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

async function startDevServerOnce(options: DevServerOptions): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  const inspectorPort = await freePort();
  const ownsDir = options.persistTo === undefined;
  const persistTo = options.persistTo ?? mkdtempSync(path.join(tmpdir(), 'edge-image-api-dev-'));
  const timeoutMs = options.timeoutMs ?? 90_000;
  const graceMs = options.graceMs ?? 5_000;
  const verbose = options.verbose ?? Boolean(process.env.DEV_SERVER_VERBOSE);
  const url = `http://127.0.0.1:${port}`;

  const args = [
    path.join(PROJECT_ROOT, 'src', 'cli', 'dev.ts'),
    '--',
    '--port', String(port),
    '--ip', '127.0.0.1',
    '--persist-to', persistTo,
    '--inspector-port', String(inspectorPort),
    ...(options.wranglerArgs ?? []),
  ];
  const child: ChildProcess = spawn(path.join(BIN_DIR, 'node'), args, {
    cwd: PROJECT_ROOT,
    env: wranglerEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    if (ownsDir) rmSync(persistTo, { recursive: true, force: true });
    throw new Error(`could not start dev.ts: ${err.message}`);
  }
  const pid = child.pid;
  let wranglerGroup: number | undefined;
  let log = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (verbose) process.stderr.write(text);
    log = (log + text).slice(-OUTPUT_LIMIT);
    wranglerGroup ??= Number(/running as process group (\d+)/.exec(log)?.[1]) || undefined;
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const groups = () => [pid, ...(wranglerGroup ? [wranglerGroup] : [])];
  // Last resort if the test process exits without calling stop().
  const onProcessExit = () => {
    for (const g of groups()) if (groupAlive(g)) signalGroup(g, 'SIGKILL');
  };
  process.on('exit', onProcessExit);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // dev.ts forwards SIGTERM to wrangler's group and waits for it to be empty.
      for (const g of groups()) if (groupAlive(g)) signalGroup(g, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      await Promise.race([exitPromise, sleep(graceMs)]);
      for (const g of groups()) await waitGroupGone(g, Math.max(0, deadline - Date.now()));
      for (const g of groups()) if (groupAlive(g)) signalGroup(g, 'SIGKILL');
      const left = [];
      for (const g of groups()) if (!(await waitGroupGone(g, 5_000))) left.push(g);
      await Promise.race([exitPromise, sleep(1_000)]);
      // Children orphaned by wrangler's exit are reaped by init a moment later; wait for that too,
      // so that afterwards process.kill(-group, 0) reports ESRCH (zombies alone are not an error).
      for (const g of groups()) await waitGroupReaped(g, 10_000);
      process.off('exit', onProcessExit);
      if (ownsDir) rmSync(persistTo, { recursive: true, force: true });
      if (left.length) throw new Error(`process groups still alive after SIGKILL: ${left.join(', ')}`);
    })());

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) {
      await stop().catch(() => {});
      throw new Error(`dev server exited before answering (exit code ${child.exitCode}):\n${log.slice(-4_000)}`);
    }
    if (Date.now() > deadline) {
      await stop().catch(() => {});
      throw new Error(`dev server did not answer GET ${url}/ within ${timeoutMs} ms:\n${log.slice(-4_000)}`);
    }
    try {
      const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(5_000) });
      await res.body?.cancel();
      break; // any status will do
    } catch {
      await sleep(250);
    }
  }

  return { url, port, persistTo, pid, groups, output: () => log, stop };
}
