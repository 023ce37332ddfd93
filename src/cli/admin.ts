/// <reference types="node" />
/**
 * Operator commands: `npm run admin -- <command> ...` (see USAGE below).
 * Exit codes: 0 success, 1 failure (unknown user, duplicate email, database error), 2 bad usage.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { normalizeKeyName } from '../auth/api-keys.ts';
import { normalizeEmail as normalizeAddress } from '../auth/email.ts';
import { D1Error, query, resolveTarget, sql, type D1Target } from './d1.ts';
import { KEY_LENGTH, STORED_PREFIX_LENGTH, generateKey, hashKey, isWellFormedKey, storedKey } from './keys.ts';

export const USAGE = `Usage: npm run admin -- <command> [arguments] [options]

Commands:
  create-user <email> [--plan free|pro] [--until <ISO-8601>]
        Create a user and a first API key named "default". The key is printed once,
        alone on the last line of output. The user sets a web password by signing up
        with this e-mail and giving that key.
  create-key <email> [--name <label>]
        Create another API key (default name "default"); printed alone on the last line.
  revoke-key <key-prefix>
        Revoke the key whose 12-character prefix (e.g. imgk_AbCdEfG) matches; any longer
        start of the key, or the whole key, is accepted too.
  set-plan <email> free|pro [--until <ISO-8601>]
        Change the plan. Pro without --until never ends; free clears the end date.
  show-user <email> [--json]
        Plan, effective plan, subscription end, today's usage (UTC), web password and API keys.
  reset-password <email>
        Remove the user's web password and end their web sessions (a lost password, or an
        account someone else claimed). They set a new one by signing up with the e-mail and
        one of the account's API keys; revoke keys first if a key leaked.
  help  Show this text.

Options (all commands):
  --remote             use the remote (production) D1 database instead of the local one
  --persist-to <dir>   local persistence directory (default: $IMAGE_API_PERSIST_TO, else .wrangler/state)

Dates: ISO-8601, e.g. 2027-01-31 or 2027-01-31T12:00:00Z; a time without an offset is UTC.
Stored as UTC (toISOString).`;

/** An error with the process exit code it should produce. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

const usageError = (message: string) => new CliError(message, 2);

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

export function normalizeEmail(input: string): string {
  const email = normalizeAddress(input);
  if (email === null) throw usageError(`not a valid e-mail address: ${JSON.stringify(input)}`);
  return email;
}

export type Plan = 'free' | 'pro';

export function parsePlan(input: string | undefined): Plan {
  if (input === 'free' || input === 'pro') return input;
  throw usageError(`plan must be "free" or "pro", got ${JSON.stringify(input ?? '')}`);
}

const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Parses an ISO-8601 date or date-time (UTC unless an offset is given) and returns `toISOString()`. */
export function parseUntil(input: string): string {
  const m = ISO_DATE.exec(input.trim());
  const fail = () => usageError(`--until must be an ISO-8601 date such as 2027-01-31 or 2027-01-31T12:00:00Z, got ${JSON.stringify(input)}`);
  if (!m) throw fail();
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) throw fail();
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
    if (!z || Number(z[2]) > 23 || Number(z[3] ?? 0) > 59) throw fail();
    offsetMinutes = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3] ?? 0));
  }
  const ms = Number((frac + '000').slice(0, 3));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000);
  if (Number.isNaN(date.getTime()) || year < 1970 || year > 9999) throw fail();
  return date.toISOString();
}

export function parseKeyName(input: string): string {
  const name = normalizeKeyName(input);
  if (name === null) throw usageError('--name must be 1 to 64 characters without control characters');
  return name;
}

/** A Pro plan whose subscription_ends_at has passed counts as Free. */
export function effectivePlan(plan: unknown, subscriptionEndsAt: unknown, now: Date = new Date()): Plan {
  if (plan !== 'pro') return 'free';
  if (subscriptionEndsAt === null || subscriptionEndsAt === undefined) return 'pro';
  return Date.parse(String(subscriptionEndsAt)) > now.getTime() ? 'pro' : 'free';
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

type Row = Record<string, unknown>;

export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

function targetLabel(target: D1Target): string {
  if (target.remote) return 'remote database';
  return target.persistTo ? `local database (${target.persistTo})` : 'local database';
}

function describePlan(plan: string, endsAt: unknown): string {
  if (plan !== 'pro') return 'free';
  return endsAt ? `pro until ${endsAt}` : 'pro (no end date)';
}

async function createUser(email: string, plan: Plan, until: string | null, target: D1Target, io: Output): Promise<void> {
  const key = generateKey();
  const { prefix, keyHash } = storedKey(key);
  let rows: Row[][];
  try {
    rows = await query(
      sql`INSERT INTO users (email, plan, subscription_ends_at) VALUES (${email}, ${plan}, ${until})
  RETURNING id, email, plan, subscription_ends_at;
INSERT INTO api_keys (user_id, name, prefix, key_hash)
  SELECT id, 'default', ${prefix}, ${keyHash} FROM users WHERE email = ${email} AND id = last_insert_rowid()
  RETURNING id, name, prefix, created_at;`,
      target,
    );
  } catch (err) {
    if (err instanceof D1Error && /UNIQUE constraint failed: users\.email/i.test(err.message)) {
      throw new CliError(`a user with e-mail ${email} already exists`, 1);
    }
    throw err;
  }
  const user = rows[0]?.[0];
  const apiKey = rows[1]?.[0];
  if (!user || !apiKey) throw new CliError('the user or key was not created (unexpected database answer)', 1);
  io.out(`Created user ${user.email} (plan ${describePlan(String(user.plan), user.subscription_ends_at)}) in the ${targetLabel(target)}.`);
  io.out(`API key "default", prefix ${apiKey.prefix}. It is shown only this once; store it now:`);
  io.out(key);
}

async function createKey(email: string, name: string, target: D1Target, io: Output): Promise<void> {
  const key = generateKey();
  const { prefix, keyHash } = storedKey(key);
  const rows = await query(
    sql`INSERT INTO api_keys (user_id, name, prefix, key_hash)
  SELECT id, ${name}, ${prefix}, ${keyHash} FROM users WHERE email = ${email}
  RETURNING id, name, prefix, created_at;`,
    target,
  );
  const apiKey = rows[0]?.[0];
  if (!apiKey) throw new CliError(`no user with e-mail ${email}`, 1);
  io.out(`Created API key ${JSON.stringify(apiKey.name)} for ${email}, prefix ${apiKey.prefix}. It is shown only this once; store it now:`);
  io.out(key);
}

async function revokeKey(input: string, target: D1Target, io: Output): Promise<void> {
  const given = input.trim();
  if (!/^[0-9A-Za-z_]+$/.test(given) || given.length < STORED_PREFIX_LENGTH || given.length > KEY_LENGTH) {
    throw usageError(
      `give the key's ${STORED_PREFIX_LENGTH}-character prefix (as shown by show-user, e.g. imgk_AbCdEfG), a longer start of the key, or the whole key; got ${JSON.stringify(input)}`,
    );
  }
  // A whole key is matched exactly by its hash; anything shorter by the stored prefix.
  const byHash = isWellFormedKey(given);
  const match = (table: string) =>
    byHash ? `${table}.key_hash = ${sql`${hashKey(given)}`}` : `${table}.prefix = ${sql`${given.slice(0, STORED_PREFIX_LENGTH)}`}`;
  const now = new Date().toISOString();
  const rows = await query(
    `SELECT k.id, k.name, k.prefix, k.created_at, k.revoked_at, u.email
  FROM api_keys k JOIN users u ON u.id = k.user_id WHERE ${match('k')} ORDER BY k.id;
UPDATE api_keys SET revoked_at = ${sql`${now}`}
  WHERE ${match('api_keys')} AND revoked_at IS NULL AND (SELECT count(*) FROM api_keys k WHERE ${match('k')}) = 1
  RETURNING id, revoked_at;`,
    target,
  );
  const matches = rows[0] ?? [];
  const what = byHash ? 'that key' : `prefix ${given.slice(0, STORED_PREFIX_LENGTH)}`;
  if (matches.length === 0) throw new CliError(`no API key matches ${what}`, 1);
  if (matches.length > 1) {
    const list = matches.map((k) => `  ${k.email}  ${JSON.stringify(k.name)}  created ${k.created_at}${k.revoked_at ? '  (revoked)' : ''}`);
    throw new CliError(`${matches.length} API keys match ${what}; nothing revoked. Give the whole key to pick one:\n${list.join('\n')}`, 1);
  }
  const k = matches[0];
  const label = `key ${JSON.stringify(k.name)} (prefix ${k.prefix}) of ${k.email}`;
  if ((rows[1] ?? []).length === 0) {
    io.out(`The ${label} was already revoked at ${k.revoked_at}; nothing changed.`);
    return;
  }
  io.out(`Revoked the ${label} at ${now}. Processing calls refuse it at once; GET /api/v1/me may answer it for up to 60 s more (README, Consistency).`);
}

async function setPlan(email: string, plan: Plan, until: string | null, target: D1Target, io: Output): Promise<void> {
  const rows = await query(
    sql`UPDATE users SET plan = ${plan}, subscription_ends_at = ${until} WHERE email = ${email}
  RETURNING email, plan, subscription_ends_at;`,
    target,
  );
  const user = rows[0]?.[0];
  if (!user) throw new CliError(`no user with e-mail ${email}`, 1);
  const effective = effectivePlan(user.plan, user.subscription_ends_at);
  if (plan === 'pro' && effective !== 'pro') io.err(`warning: ${until} is in the past, so ${email} is effectively on the free plan`);
  io.out(`${user.email}: plan ${describePlan(String(user.plan), user.subscription_ends_at)} (effective plan: ${effective}); in effect everywhere within 60 s.`);
}

async function resetPassword(email: string, target: D1Target, io: Output): Promise<void> {
  const rows = await query(
    sql`SELECT id FROM users WHERE email = ${email};
DELETE FROM passwords WHERE user_id = (SELECT id FROM users WHERE email = ${email}) RETURNING user_id;
DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE email = ${email}) RETURNING user_id;`,
    target,
  );
  if (!rows[0]?.[0]) throw new CliError(`no user with e-mail ${email}`, 1);
  const hadPassword = (rows[1] ?? []).length > 0;
  const sessions = (rows[2] ?? []).length;
  io.out(
    `${email}: ${hadPassword ? 'web password removed' : 'had no web password'}, ${sessions} web session${sessions === 1 ? '' : 's'} ended. ` +
      'The converter refuses those sessions at once, the pages within 60 s. A new password is set by signing up with this e-mail and one of the account\'s API keys.',
  );
}

export interface UserReport {
  email: string;
  plan: string;
  effective_plan: Plan;
  subscription_ends_at: string | null;
  created_at: string;
  usage_today: { day: string; used: number };
  /** Whether a web password was set (by signing up); web_sessions counts live browser sessions. */
  web_password_set: boolean;
  web_sessions: number;
  keys: { name: string; prefix: string; created_at: string; last_used_at: string | null; revoked_at: string | null }[];
}

async function showUser(email: string, json: boolean, target: D1Target, io: Output): Promise<void> {
  const now = new Date();
  const day = now.toISOString().slice(0, 10);
  const rows = await query(
    sql`SELECT id, email, plan, subscription_ends_at, created_at FROM users WHERE email = ${email};
SELECT d.used FROM daily_usage d JOIN users u ON u.id = d.user_id WHERE u.email = ${email} AND d.day = ${day};
SELECT k.name, k.prefix, k.created_at, k.last_used_at, k.revoked_at
  FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.email = ${email} ORDER BY k.created_at, k.id;
SELECT COUNT(*) AS n FROM passwords p JOIN users u ON u.id = p.user_id WHERE u.email = ${email};
SELECT COUNT(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ${email} AND s.expires_at > ${now.toISOString()};`,
    target,
  );
  const user = rows[0]?.[0];
  if (!user) throw new CliError(`no user with e-mail ${email}`, 1);
  const report: UserReport = {
    email: String(user.email),
    plan: String(user.plan),
    effective_plan: effectivePlan(user.plan, user.subscription_ends_at, now),
    subscription_ends_at: (user.subscription_ends_at as string | null) ?? null,
    created_at: String(user.created_at),
    usage_today: { day, used: Number(rows[1]?.[0]?.used ?? 0) },
    web_password_set: Number(rows[3]?.[0]?.n ?? 0) > 0,
    web_sessions: Number(rows[4]?.[0]?.n ?? 0),
    keys: (rows[2] ?? []).map((k) => ({
      name: String(k.name),
      prefix: String(k.prefix),
      created_at: String(k.created_at),
      last_used_at: (k.last_used_at as string | null) ?? null,
      revoked_at: (k.revoked_at as string | null) ?? null,
    })),
  };
  if (json) {
    io.out(JSON.stringify(report, null, 2));
    return;
  }
  const ended = report.plan === 'pro' && report.effective_plan === 'free' ? ' (subscription ended)' : '';
  io.out(`email:                ${report.email}`);
  io.out(`plan:                 ${report.plan}`);
  io.out(`effective plan:       ${report.effective_plan}${ended}`);
  io.out(`subscription ends at: ${report.subscription_ends_at ?? '-'}`);
  io.out(`created:              ${report.created_at}`);
  io.out(`usage today:          ${report.usage_today.used} (${report.usage_today.day} UTC)`);
  io.out(`web password:         ${report.web_password_set ? `set (${report.web_sessions} live session${report.web_sessions === 1 ? '' : 's'})` : 'not set'}`);
  if (report.keys.length === 0) {
    io.out('keys:                 none');
    return;
  }
  io.out(`keys (${report.keys.length}):`);
  const table = [
    ['NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
    ...report.keys.map((k) => [k.name, k.prefix, k.created_at, k.last_used_at ?? '-', k.revoked_at ?? '-']),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) io.out('  ' + r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

// ---------------------------------------------------------------------------
// Argument handling
// ---------------------------------------------------------------------------

const COMMAND_OPTIONS: Record<string, string[]> = {
  'create-user': ['plan', 'until'],
  'create-key': ['name'],
  'revoke-key': [],
  'set-plan': ['until'],
  'show-user': ['json'],
  'reset-password': [],
  help: [],
};
const COMMON_OPTIONS = ['remote', 'persist-to', 'help'];
const ARITY: Record<string, number> = { 'create-user': 1, 'create-key': 1, 'revoke-key': 1, 'set-plan': 2, 'show-user': 1, 'reset-password': 1, help: 0 };

/** Runs one admin invocation; returns the exit code. */
export async function run(argv: string[], io: Output): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        options: {
          remote: { type: 'boolean' },
          'persist-to': { type: 'string' },
          plan: { type: 'string' },
          until: { type: 'string' },
          name: { type: 'string' },
          json: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
        allowPositionals: true,
        strict: true,
      });
    } catch (err) {
      throw usageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    const [command, ...args] = positionals;
    if (command === undefined) {
      if (values.help) {
        io.out(USAGE);
        return 0;
      }
      throw usageError('no command given');
    }
    if (command === 'help' || values.help) {
      io.out(USAGE);
      return 0;
    }
    const allowed = COMMAND_OPTIONS[command];
    if (!allowed) throw usageError(`unknown command ${JSON.stringify(command)}`);
    for (const option of Object.keys(values)) {
      if (!allowed.includes(option) && !COMMON_OPTIONS.includes(option)) throw usageError(`${command} does not take --${option}`);
    }
    if (args.length !== ARITY[command]) {
      throw usageError(`${command} takes ${ARITY[command]} argument${ARITY[command] === 1 ? '' : 's'}, got ${args.length}`);
    }
    let target: D1Target;
    try {
      target = resolveTarget({ remote: values.remote, persistTo: values['persist-to'] });
    } catch (err) {
      throw usageError((err as Error).message);
    }

    switch (command) {
      case 'create-user': {
        const email = normalizeEmail(args[0]);
        const plan = parsePlan(values.plan ?? 'free');
        if (values.until !== undefined && plan !== 'pro') throw usageError('--until only applies to --plan pro');
        const until = values.until !== undefined ? parseUntil(values.until) : null;
        await createUser(email, plan, until, target, io);
        break;
      }
      case 'create-key':
        await createKey(normalizeEmail(args[0]), parseKeyName(values.name ?? 'default'), target, io);
        break;
      case 'revoke-key':
        await revokeKey(args[0], target, io);
        break;
      case 'set-plan': {
        const email = normalizeEmail(args[0]);
        const plan = parsePlan(args[1]);
        if (values.until !== undefined && plan !== 'pro') throw usageError('--until only applies to the pro plan (free clears the end date)');
        const until = values.until !== undefined ? parseUntil(values.until) : null;
        await setPlan(email, plan, until, target, io);
        break;
      }
      case 'show-user':
        await showUser(normalizeEmail(args[0]), values.json === true, target, io);
        break;
      case 'reset-password':
        await resetPassword(normalizeEmail(args[0]), target, io);
        break;
    }
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`admin: ${err.message}`);
      if (err.exitCode === 2) io.err('Run "npm run admin -- help" for usage.');
      return err.exitCode;
    }
    if (err instanceof D1Error) {
      io.err(`admin: database error: ${err.message}`);
      return 1;
    }
    io.err(`admin: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await run(process.argv.slice(2), {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  });
}
