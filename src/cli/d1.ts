/// <reference types="node" />
/**
 * Runs SQL against the D1 database `edge-image-api` (binding DB in wrangler.toml)
 * through `wrangler d1 execute --json`, locally (default) or remotely.
 *
 * `wrangler d1 execute --command` has no bind parameters, so every value that
 * goes into SQL text must pass through `sqlLiteral` (or the `sql` template tag,
 * which calls it for each interpolated value).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN_DIR = path.join(PROJECT_ROOT, 'node_modules', '.bin');
export const SCHEMA_FILE = path.join(PROJECT_ROOT, 'schema.sql');
export const DATABASE_NAME = 'edge-image-api';
/** Environment variable that sets the default `--persist-to` directory for local runs. */
export const PERSIST_ENV = 'IMAGE_API_PERSIST_TO';

// ---------------------------------------------------------------------------
// SQL literals
// ---------------------------------------------------------------------------

export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/**
 * Wrangler strips the text `BEGIN TRANSACTION;` / `COMMIT;` from SQL before
 * running it locally, even inside string literals. Strings that contain it are
 * written as a hex blob cast to TEXT instead, which wrangler cannot touch.
 */
const WRANGLER_MANGLED = 'BEGIN TRANSACTION';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Negative numbers are parenthesised so that `1-${x}` can never become a `--` comment. */
function signed(text: string): string {
  return text.startsWith('-') ? `(${text})` : text;
}

/**
 * One value as an SQLite literal.
 * - strings: single-quoted with `'` doubled; NUL and lone UTF-16 surrogates are rejected
 * - numbers: finite only; integers and reals in JavaScript's shortest round-trip form
 * - bigints: must fit in a signed 64-bit integer
 * - booleans: 1 / 0; null: NULL; bytes: X'..' blob
 */
export function sqlLiteral(value: SqlValue): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string': {
      if (value.includes('\0')) throw new TypeError('SQL string literal must not contain NUL');
      if (LONE_SURROGATE.test(value)) throw new TypeError('SQL string literal must be well-formed UTF-16 (lone surrogate)');
      if (value.includes(WRANGLER_MANGLED)) {
        return `CAST(X'${Buffer.from(value, 'utf8').toString('hex')}' AS TEXT)`;
      }
      return `'${value.replaceAll("'", "''")}'`;
    }
    case 'number': {
      if (!Number.isFinite(value)) throw new TypeError(`SQL number literal must be finite, got ${value}`);
      if (Object.is(value, -0)) return '0';
      return signed(String(value));
    }
    case 'bigint': {
      if (value < INT64_MIN || value > INT64_MAX) throw new RangeError('SQL integer literal out of 64-bit range');
      return signed(value.toString());
    }
    case 'boolean':
      return value ? '1' : '0';
    default:
      if (value instanceof Uint8Array) return `X'${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`;
      throw new TypeError(`cannot write ${value === undefined ? 'undefined' : typeof value} as an SQL literal`);
  }
}

/** Template tag: sql`SELECT * FROM users WHERE email = ${email}` with every value through `sqlLiteral`. */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): string {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += sqlLiteral(values[i]) + strings[i + 1];
  return out;
}

// ---------------------------------------------------------------------------
// Running wrangler
// ---------------------------------------------------------------------------

export interface D1Target {
  /** Run against the remote (production) database instead of the local one. */
  remote?: boolean;
  /** Local persistence directory (wrangler's `--persist-to`); local runs only. */
  persistTo?: string;
}

export interface StatementResult {
  results: Record<string, unknown>[];
  success: boolean;
  meta?: Record<string, unknown>;
}

export class D1Error extends Error {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  constructor(message: string, details: { stdout?: string; stderr?: string; exitCode?: number | null } = {}) {
    super(message);
    this.name = 'D1Error';
    this.stdout = details.stdout ?? '';
    this.stderr = details.stderr ?? '';
    this.exitCode = details.exitCode ?? null;
  }
}

/**
 * Normalises a target: `--persist-to` falls back to $IMAGE_API_PERSIST_TO for
 * local runs and becomes an absolute path; `remote` with a persist directory is an error.
 */
export function resolveTarget(target: D1Target = {}, env: NodeJS.ProcessEnv = process.env): D1Target {
  if (target.remote) {
    if (target.persistTo) throw new TypeError('--persist-to cannot be combined with --remote');
    return { remote: true };
  }
  const dir = target.persistTo || env[PERSIST_ENV] || undefined;
  return dir ? { remote: false, persistTo: path.resolve(dir) } : { remote: false };
}

/**
 * Environment for every wrangler child: project binaries first on PATH (Node 24, local wrangler), no
 * telemetry, and no local trace store unless asked for (X_LOCAL_OBSERVABILITY=true): wrangler dev
 * otherwise streams every request's trace into a SQLite Durable Object of its own, committed with
 * fsync, which cost 4-9 ms of each request here (docs/performance.md). A deployment is not
 * affected: its logs are Workers Logs (wrangler.toml's [observability]).
 */
export function wranglerEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    PATH: [BIN_DIR, base.PATH].filter(Boolean).join(path.delimiter),
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_SEND_METRICS: 'false',
    X_LOCAL_OBSERVABILITY: base.X_LOCAL_OBSERVABILITY ?? 'false',
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the project's own wrangler (node_modules/.bin) with `args`; never the global one. */
export function runWrangler(args: string[], options: { timeoutMs?: number } = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BIN_DIR, 'wrangler'), args, {
      cwd: PROJECT_ROOT,
      env: { ...wranglerEnv(), NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new D1Error(`wrangler ${args.slice(0, 2).join(' ')} timed out after ${timeoutMs} ms`, { stdout, stderr }));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new D1Error(`could not start wrangler: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

function parseJsonOutput(stdout: string): unknown {
  const text = stdout.trim();
  try {
    return JSON.parse(text);
  } catch {
    // Tolerate stray log lines before the JSON document.
    const start = text.search(/^[[{]/m);
    if (start > 0) {
      try {
        return JSON.parse(text.slice(start));
      } catch {
        /* fall through */
      }
    }
    return undefined;
  }
}

function targetArgs(target: D1Target): string[] {
  if (target.remote) return ['--remote', '--yes'];
  return target.persistTo ? ['--local', `--persist-to=${target.persistTo}`] : ['--local'];
}

function toResults(run: RunResult, what: string): StatementResult[] {
  const parsed = parseJsonOutput(run.stdout);
  if (run.code === 0 && Array.isArray(parsed)) return parsed as StatementResult[];
  const details = { stdout: run.stdout, stderr: run.stderr, exitCode: run.code };
  const errorText =
    parsed && typeof parsed === 'object' && 'error' in parsed
      ? (parsed as { error?: { text?: unknown } }).error?.text
      : undefined;
  if (typeof errorText === 'string') throw new D1Error(stripAnsi(errorText), details);
  const tail = stripAnsi(run.stderr || run.stdout).trim().split('\n').slice(-15).join('\n');
  throw new D1Error(`${what} failed (exit ${run.code ?? run.signal})${tail ? `:\n${tail}` : ''}`, details);
}

/** Longest SQL text passed on the command line (Linux caps one argument at 128 KiB). */
const MAX_COMMAND_BYTES = 120_000;

/**
 * Executes one or more `;`-separated statements as a single batch (D1 runs the
 * batch atomically: if one statement fails, none takes effect) and returns one
 * result per statement.
 */
export async function execute(sqlText: string, target: D1Target = {}): Promise<StatementResult[]> {
  const resolved = resolveTarget(target);
  if (sqlText.includes(WRANGLER_MANGLED)) {
    throw new TypeError(`SQL text must not contain "${WRANGLER_MANGLED}" (wrangler rewrites it); D1 runs each batch in a transaction anyway`);
  }
  if (sqlText.includes('\0')) throw new TypeError('SQL text must not contain NUL');
  if (Buffer.byteLength(sqlText, 'utf8') > MAX_COMMAND_BYTES) throw new RangeError('SQL text too long for one wrangler --command');
  const run = await runWrangler(['d1', 'execute', DATABASE_NAME, '--json', `--command=${sqlText}`, ...targetArgs(resolved)]);
  return toResults(run, 'wrangler d1 execute');
}

/** Executes a batch and returns the rows of each statement. */
export async function query(sqlText: string, target: D1Target = {}): Promise<Record<string, unknown>[][]> {
  return (await execute(sqlText, target)).map((r) => r.results ?? []);
}

/** Applies schema.sql (idempotent: every statement is CREATE ... IF NOT EXISTS) with `--file`. */
export async function applySchema(target: D1Target = {}, schemaFile: string = SCHEMA_FILE): Promise<StatementResult[]> {
  const resolved = resolveTarget(target);
  const run = await runWrangler(['d1', 'execute', DATABASE_NAME, '--json', `--file=${path.resolve(schemaFile)}`, ...targetArgs(resolved)]);
  return toResults(run, 'applying the schema');
}

/**
 * Brings the database up to date with migrations/ (`wrangler d1 migrations apply`), as a deployment
 * is: a local database made by an older version of the project gets the same changes.
 */
export async function applyMigrations(target: D1Target = {}): Promise<void> {
  const resolved = resolveTarget(target);
  const run = await runWrangler(['d1', 'migrations', 'apply', DATABASE_NAME, ...targetArgs(resolved)]);
  if (run.code !== 0) {
    const tail = stripAnsi(run.stderr || run.stdout).trim().split('\n').slice(-15).join('\n');
    throw new D1Error(`applying migrations failed (exit ${run.code ?? run.signal})${tail ? `:\n${tail}` : ''}`, { stdout: run.stdout, stderr: run.stderr, exitCode: run.code });
  }
}
