/// <reference types="node" />
/**
 * `npm run dev [-- <options>] [-- <wrangler dev args>]`
 *
 * 1. brings the LOCAL D1 database up to date with migrations/ (as a deployment is) and seeds the
 *    demo accounts,
 * 2. prints the demo API keys,
 * 3. runs `wrangler dev --port 8787` in its own process group, forwards SIGINT/SIGTERM/SIGHUP
 *    to the whole group, makes sure nothing of the group (workerd) is left, and exits with
 *    wrangler's exit code.
 *
 * Own options (recognised anywhere, also after `--`): `--persist-to <dir>` (used for every
 * step; default $IMAGE_API_PERSIST_TO, else wrangler's .wrangler/state), `--port <n>`, and
 * `--rtt <far>/<near>` (or $SIMULATED_RTT_MS): every D1 and R2 call answers <far> ms later and
 * every call to a user's Durable Object <near> ms later, as for a caller far from the stores.
 * Everything else is passed to `wrangler dev` unchanged. wrangler's stdin is not connected
 * (a background process group must not read the terminal), so its hotkeys are off: use Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMigrations, BIN_DIR, PERSIST_ENV, PROJECT_ROOT, wranglerEnv } from './d1.ts';
import { groupAlive, signalGroup, stopGroup } from './process-group.ts';
import { DEMO_ACCOUNTS, seedLocal } from './seed.ts';

export const DEFAULT_PORT = 8787;

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

export interface DevArgs {
  persistTo?: string;
  port: string;
  /** "far/near" ms of simulated round trips to the stores, or undefined. */
  rtt?: string;
  forwarded: string[];
  help: boolean;
}

const USAGE = `Usage: npm run dev [-- [--persist-to <dir>] [--port <n>] [--rtt <far>/<near>] [-- <wrangler dev args>]]
Applies migrations/ to the local D1 database, seeds the demo accounts, prints their
API keys and runs \`wrangler dev --port 8787\`. --rtt 100/5 makes every D1 and R2 call
answer 100 ms later and every Durable Object call 5 ms later (a caller far from the
stores). Other arguments go to wrangler dev.`;

export function parseDevArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): DevArgs {
  const forwarded: string[] = [];
  let persistTo: string | undefined;
  let port: string | undefined;
  let rtt: string | undefined;
  let help = false;
  let afterSeparator = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--' && !afterSeparator) {
      afterSeparator = true;
      continue;
    }
    const own = /^--(persist-to|port|rtt)(?:=(.*))?$/s.exec(arg);
    if (own) {
      const value = own[2] ?? argv[++i];
      if (value === undefined || value === '') throw new Error(`--${own[1]} needs a value`);
      if (own[1] === 'persist-to') persistTo = value;
      else if (own[1] === 'rtt') {
        if (!/^\d{1,5}\/\d{1,5}$/.test(value)) throw new Error(`--rtt must be <far ms>/<near ms>, such as 100/5; got ${value}`);
        rtt = value;
      } else if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new Error(`--port must be a port number, got ${value}`);
      else port = value;
      continue;
    }
    if (/^--remote(=|$)|^-r$/.test(arg)) throw new Error('npm run dev is local only (--remote is not supported)');
    if (!afterSeparator && (arg === '--help' || arg === '-h')) {
      help = true;
      continue;
    }
    forwarded.push(arg);
  }
  const dir = persistTo ?? (env[PERSIST_ENV] || undefined);
  const fromEnv = env.SIMULATED_RTT_MS?.trim();
  if (rtt === undefined && fromEnv) {
    if (!/^\d{1,5}\/\d{1,5}$/.test(fromEnv)) throw new Error(`SIMULATED_RTT_MS must be <far ms>/<near ms>, such as 100/5; got ${fromEnv}`);
    rtt = fromEnv;
  }
  return { persistTo: dir ? path.resolve(dir) : undefined, port: port ?? String(DEFAULT_PORT), rtt, forwarded, help };
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

async function main(argv: string[]): Promise<number> {
  let args: DevArgs;
  try {
    args = parseDevArgs(argv);
  } catch (err) {
    process.stderr.write(`dev: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }

  const where = args.persistTo ? ` (${args.persistTo})` : '';
  process.stdout.write(`dev: applying migrations and seeding the demo accounts in the local D1 database${where}...\n`);
  try {
    await applyMigrations({ remote: false, persistTo: args.persistTo });
    await seedLocal({ persistTo: args.persistTo });
  } catch (err) {
    process.stderr.write(`dev: preparing the local database failed: ${(err as Error).message}\n`);
    return 1;
  }
  process.stdout.write('\nDemo API keys (local database only):\n');
  for (const a of DEMO_ACCOUNTS) process.stdout.write(`  ${a.plan.padEnd(4)}  ${a.email.padEnd(16)}  ${a.key}\n`);
  process.stdout.write('\n');

  const simulated = args.rtt ? ['--var', `SIMULATED_RTT_MS:${args.rtt}`] : [];
  if (args.rtt) process.stdout.write(`dev: every D1 and R2 call answers ${args.rtt.split('/')[0]} ms later, every Durable Object call ${args.rtt.split('/')[1]} ms later\n`);
  const wranglerArgs = ['dev', '--port', args.port, ...(args.persistTo ? ['--persist-to', args.persistTo] : []), ...simulated, ...args.forwarded];
  const child = spawn(path.join(BIN_DIR, 'wrangler'), wranglerArgs, {
    cwd: PROJECT_ROOT,
    env: wranglerEnv(),
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true, // own process group: workerd and friends die with it
  });
  const pgid = child.pid;
  if (pgid === undefined) {
    await new Promise((resolve) => child.once('error', resolve));
    process.stderr.write('dev: could not start wrangler\n');
    return 1;
  }
  // Parsed by test/node/dev-server.ts: keep the wording.
  process.stdout.write(`dev: wrangler dev is running as process group ${pgid} (Ctrl-C stops it)\n`);

  let signals = 0;
  const forward = (signal: NodeJS.Signals) => {
    signals++;
    // A third Ctrl-C means "now": kill the group outright.
    signalGroup(pgid, signals >= 3 ? 'SIGKILL' : signal);
  };
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
    const handler = () => forward(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  // If this process dies unexpectedly, take the group with it.
  const onExit = () => {
    if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  };
  process.on('exit', onExit);

  const [code, signal] = (await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])))) as [
    number | null,
    NodeJS.Signals | null,
  ];
  // wrangler is gone; make sure nothing it started (workerd) outlives it.
  await stopGroup(pgid, 3_000);
  for (const [sig, handler] of handlers) process.off(sig, handler);
  process.off('exit', onExit);
  if (code !== null) return code;
  return 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
