/// <reference types="node" />
/**
 * Operator CLI against a real local D1 database (wrangler d1 execute, fresh --persist-to directory).
 * Every wrangler call costs ~2 s, so checks are batched; the seeding checks run on their own
 * database, concurrently with the admin checks.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, applySchema, query, sql, sqlLiteral, wranglerEnv } from '../../src/cli/d1';
import { KEY_PATTERN, generateKey, hashKey } from '../../src/cli/keys';
import { DEMO_ACCOUNTS, seedLocal } from '../../src/cli/seed';
import { effectivePlan, normalizeEmail, parseUntil } from '../../src/cli/admin';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node src/cli/<file> ...` with node_modules/.bin first on PATH, so Node 24 runs the TypeScript. */
function runCli(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env = wranglerEnv();
    delete env.IMAGE_API_PERSIST_TO;
    const child = spawn('node', [path.join('src', 'cli', file), ...args], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const today = () => new Date().toISOString().slice(0, 10);

const HOSTILE = [
  "it's",
  "'",
  "''",
  "x'); DELETE FROM users; --",
  "'; DROP TABLE users; --",
  'a;b;;c;',
  '-- not a comment',
  '/* not a comment */ */ /*',
  'line1\nline2\r\nline3\ttab\rcr',
  'back\\slash \\\' \\"',
  '"double" `tick` [bracket] ]',
  'ünïcødé 日本語 Ελληνικά 😀👩‍👩‍👧 \u200b\u2028\u2029',
  'BEGIN TRANSACTION; COMMIT;',
  '$1 ?1 ? :name @x %s %%',
  '',
  '  padded  ',
  'X\'41\'',
  'CAST(1 AS TEXT)',
];

describe('sqlLiteral (pure)', () => {
  it('quotes and rejects what it must', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral('')).toBe("''");
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(true)).toBe('1');
    expect(sqlLiteral(false)).toBe('0');
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(-5)).toBe('(-5)');
    expect(sqlLiteral(-0)).toBe('0');
    expect(sqlLiteral(1.5)).toBe('1.5');
    expect(sqlLiteral(-(2n ** 63n))).toBe('(-9223372036854775808)');
    expect(sqlLiteral(new Uint8Array([0, 255]))).toBe("X'00ff'");
    expect(sqlLiteral('BEGIN TRANSACTION')).toMatch(/^CAST\(X'[0-9a-f]+' AS TEXT\)$/);
    expect(sql`SELECT 1-${-5}, ${"a'b"}`).toBe("SELECT 1-(-5), 'a''b'");
    expect(() => sqlLiteral('a\0b')).toThrow(/NUL/);
    expect(() => sqlLiteral('\uD800x')).toThrow(/surrogate/);
    expect(() => sqlLiteral('x\uDC00')).toThrow(/surrogate/);
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlLiteral(Number.POSITIVE_INFINITY)).toThrow();
    expect(() => sqlLiteral(2n ** 63n)).toThrow();
    expect(() => sqlLiteral(undefined as unknown as null)).toThrow();
    expect(sqlLiteral('😀')).toBe("'😀'");
  });

  it('generates unbiased-looking, well-formed keys and documents 37-character demo keys', () => {
    const keys = Array.from({ length: 2000 }, generateKey);
    for (const k of keys) expect(k).toMatch(KEY_PATTERN);
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const c of k.slice(5)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62); // 64 000 characters: every base62 digit shows up ~1032 times
    for (const n of counts.values()) expect(n).toBeGreaterThan(800);
    expect(hashKey('imgk_x')).toBe(sha256('imgk_x'));
    for (const a of DEMO_ACCOUNTS) {
      expect(a.key).toHaveLength(37);
      expect(a.key).toMatch(KEY_PATTERN);
    }
    expect(DEMO_ACCOUNTS.map((a) => [a.email, a.plan])).toEqual([
      ['demo@free.local', 'free'],
      ['demo@pro.local', 'pro'],
    ]);
  });

  it('validates e-mail, dates and effective plan', () => {
    expect(normalizeEmail('  Alice@Example.COM ')).toBe('alice@example.com');
    for (const bad of ['alice', 'a@b', 'a b@c.d', '@c.d', 'a@@c.d', 'a@c\u0001.d', 'a@.d']) expect(() => normalizeEmail(bad)).toThrow();
    expect(parseUntil('2027-01-31')).toBe('2027-01-31T00:00:00.000Z');
    expect(parseUntil('2027-01-31T12:30')).toBe('2027-01-31T12:30:00.000Z');
    expect(parseUntil('2027-01-31T12:30:00+02:00')).toBe('2027-01-31T10:30:00.000Z');
    expect(parseUntil('2027-01-31T12:30:00.5-0130')).toBe('2027-01-31T14:00:00.500Z');
    for (const bad of ['tomorrow', '2027-02-30', '2027-13-01', '2027-01-01T24:00', '1/2/2027', '2027-01-01T10:00+25:00', '']) {
      expect(() => parseUntil(bad), bad).toThrow();
    }
    const now = new Date('2026-06-01T00:00:00Z');
    expect(effectivePlan('pro', null, now)).toBe('pro');
    expect(effectivePlan('pro', '2026-06-02T00:00:00.000Z', now)).toBe('pro');
    expect(effectivePlan('pro', '2026-05-31T00:00:00.000Z', now)).toBe('free');
    expect(effectivePlan('free', null, now)).toBe('free');
  });
});

describe('admin CLI and seeding against local D1', () => {
  let dir: string;
  let seedDir: string;
  /** The seeding checks, started in beforeAll on their own database and awaited by their test. */
  let seedFlow: Promise<{ users: number; keys: number; rows: Record<string, unknown>[]; revokeOut: Run; remote: Run; secondSeed: Run }>;
  const admin = (...args: string[]) => runCli('admin.ts', [...args, '--persist-to', dir]);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'edge-image-api-admin-'));
    seedDir = mkdtempSync(path.join(tmpdir(), 'edge-image-api-seed-'));
    seedFlow = (async () => {
      const remote = await runCli('seed.ts', ['--remote']);
      await expect(seedLocal({ remote: true })).rejects.toThrow(/remote/);
      const first = await runCli('seed.ts', ['--schema', '--persist-to', seedDir]);
      if (first.code !== 0) throw new Error(`seed failed: ${first.stderr}`);
      const revokeOut = await runCli('admin.ts', ['revoke-key', 'imgk_demofre', '--persist-to', seedDir]);
      const secondSeed = await runCli('seed.ts', ['--persist-to', seedDir]);
      await seedLocal({ persistTo: seedDir }); // third time, in-process
      const emails = DEMO_ACCOUNTS.map((a) => a.email);
      const hashes = DEMO_ACCOUNTS.map((a) => sha256(a.key));
      const rows = await query(
        sql`SELECT count(*) AS n FROM users;
SELECT count(*) AS n FROM api_keys;
SELECT u.email, u.plan, u.subscription_ends_at, k.name, k.prefix, k.key_hash, k.revoked_at
  FROM users u JOIN api_keys k ON k.user_id = u.id WHERE u.email IN (${emails[0]}, ${emails[1]}) AND k.key_hash IN (${hashes[0]}, ${hashes[1]})
  ORDER BY u.email;`,
        { persistTo: seedDir },
      );
      return { users: Number(rows[0][0].n), keys: Number(rows[1][0].n), rows: rows[2], revokeOut, remote, secondSeed };
    })();
    seedFlow.catch(() => {}); // reported by its own test
    await applySchema({ persistTo: dir });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(seedDir, { recursive: true, force: true });
  });

  it('round-trips hostile strings and numbers through a real query', async () => {
    const values = HOSTILE.map((s, i) => sql`(${i}, ${s})`).join(',\n');
    const rows = await query(
      `WITH t(i, s) AS (VALUES ${values}) SELECT i, s, hex(s) AS h, typeof(s) AS ty FROM t ORDER BY i;
SELECT ${sql`${-5}`} AS neg, 1-${sql`${-5}`} AS minus_neg, ${sql`${1.25}`} AS re, ${sql`${null}`} AS nu,
  CAST(${sql`${2n ** 62n}`} AS TEXT) AS big, ${sql`${true}`} AS yes;
SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'api_keys', 'daily_usage', 'results');`,
      { persistTo: dir },
    );
    expect(rows[0]).toHaveLength(HOSTILE.length);
    rows[0].forEach((row, i) => {
      expect(row.s, `value ${i}`).toBe(HOSTILE[i]);
      expect(row.ty).toBe('text');
      expect(row.h).toBe(Buffer.from(HOSTILE[i], 'utf8').toString('hex').toUpperCase());
    });
    expect(rows[1][0]).toEqual({ neg: -5, minus_neg: 6, re: 1.25, nu: null, big: String(2n ** 62n), yes: 1 });
    expect(rows[2][0].n).toBe(4);
  });

  let firstKey = '';
  const dupA = 'imgk_dupdupdAAAAAAAAAAAAAAAAAAAAAAAAA';
  const dupB = 'imgk_dupdupdBBBBBBBBBBBBBBBBBBBBBBBBB';
  it('create-user prints the key alone on the last line and stores only its hash and prefix', async () => {
    const r = await admin('create-user', 'Alice@Example.COM', '--plan', 'pro', '--until', '2030-01-01T00:00:00+01:00');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    firstKey = lastLine(r.stdout);
    expect(firstKey).toMatch(/^imgk_[0-9A-Za-z]{32}$/);
    expect(r.stdout.trimEnd().split('\n').length).toBeGreaterThan(1); // a summary first
    expect(r.stdout).toContain(firstKey.slice(0, 12));

    // Read everything, then (same wrangler call, to save time) add what later tests need:
    // two keys sharing a prefix, and usage rows for today and another day.
    const rows = await query(
      sql`SELECT * FROM users; SELECT * FROM api_keys; SELECT * FROM daily_usage; SELECT * FROM results;
INSERT INTO api_keys (user_id, name, prefix, key_hash)
  SELECT id, 'dup A', ${dupA.slice(0, 12)}, ${sha256(dupA)} FROM users WHERE email = 'alice@example.com';
INSERT INTO api_keys (user_id, name, prefix, key_hash)
  SELECT id, 'dup B', ${dupB.slice(0, 12)}, ${sha256(dupB)} FROM users WHERE email = 'alice@example.com';
INSERT INTO daily_usage (user_id, day, used) SELECT id, ${today()}, 7 FROM users WHERE email = 'alice@example.com';
INSERT INTO daily_usage (user_id, day, used) SELECT id, '2000-01-01', 99 FROM users WHERE email = 'alice@example.com';`,
      { persistTo: dir },
    );
    expect(rows[0]).toHaveLength(1);
    expect(rows[0][0]).toMatchObject({ email: 'alice@example.com', plan: 'pro', subscription_ends_at: '2029-12-31T23:00:00.000Z' });
    expect(rows[1]).toHaveLength(1);
    const key = rows[1][0];
    expect(key).toMatchObject({ user_id: rows[0][0].id, name: 'default', prefix: firstKey.slice(0, 12), key_hash: sha256(firstKey) });
    expect(key.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.revoked_at).toBeNull();
    const everything = JSON.stringify(rows);
    expect(everything).not.toContain(firstKey);
    expect(everything).not.toContain(firstKey.slice(12)); // the secret part appears nowhere
  });

  it('rejects a duplicate e-mail (exit 1) and bad usage (exit 2) without printing a key', async () => {
    const dup = await admin('create-user', 'ALICE@example.com');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists/);
    expect(dup.stdout).not.toMatch(/imgk_/);

    const cases: [string[], number, RegExp][] = [
      [['create-user', 'not-an-email'], 2, /e-mail/],
      [['create-user', 'bob@example.com', '--plan', 'gold'], 2, /plan/],
      [['create-user', 'bob@example.com', '--plan', 'pro', '--until', 'next week'], 2, /ISO-8601/],
      [['create-user', 'bob@example.com', '--until', '2030-01-01'], 2, /--until/],
      [['create-user'], 2, /argument/],
      [['create-key', 'bob@example.com', '--plan', 'pro'], 2, /does not take --plan/],
      [['set-plan', 'bob@example.com', 'gold'], 2, /plan/],
      [['set-plan', 'bob@example.com', 'free', '--until', '2030-01-01'], 2, /--until/],
      [['revoke-key', 'imgk_'], 2, /prefix/],
      [['frobnicate'], 2, /unknown command/],
      [['show-user', 'bob@example.com', '--bogus'], 2, /bogus/],
      [['show-user', 'bob@example.com', '--remote'], 2, /--persist-to cannot be combined with --remote/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(...args)));
    runs.forEach((run, i) => {
      const [args, code, message] = cases[i];
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr, args.join(' ')).toMatch(message);
    });
    const none = await runCli('admin.ts', []);
    expect(none.code).toBe(2);
    const help = await runCli('admin.ts', ['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/create-user <email>/);
  });

  let secondKey = '';
  const hostileName = "Robert'); DROP TABLE api_keys;-- 😀";
  it('create-key adds a named key for an existing user only', async () => {
    const r = await admin('create-key', 'alice@example.com', '--name', hostileName);
    expect(r.code).toBe(0);
    secondKey = lastLine(r.stdout);
    expect(secondKey).toMatch(KEY_PATTERN);
    expect(secondKey).not.toBe(firstKey);

    const missing = await admin('create-key', 'nobody@example.com');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user/);
    expect(missing.stdout).not.toMatch(/imgk_/);
  });

  it('revoke-key matches by prefix or longer start, refuses ambiguity, reports repeats', async () => {
    // dup A / dup B were inserted by the create-user test.
    expect(dupA).toMatch(KEY_PATTERN);

    const revoked = await admin('revoke-key', secondKey.slice(0, 12));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked/);

    const again = await admin('revoke-key', secondKey.slice(0, 20));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already revoked/);

    const none = await admin('revoke-key', 'imgk_zzzzzzz');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no API key matches/);

    const ambiguous = await admin('revoke-key', 'imgk_dupdupd');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/2 API keys match/);

    const exact = await admin('revoke-key', dupB);
    expect(exact.code).toBe(0);
    expect(exact.stdout).toMatch(/Revoked the key "dup B"/);
  });

  it('set-plan changes plan and end date', async () => {
    const free = await admin('set-plan', 'alice@example.com', 'free');
    expect(free.code).toBe(0);
    expect(free.stdout).toMatch(/plan free \(effective plan: free\)/);

    const lapsed = await admin('set-plan', 'Alice@example.com', 'pro', '--until', '2001-02-03');
    expect(lapsed.code).toBe(0);
    expect(lapsed.stdout).toMatch(/pro until 2001-02-03T00:00:00.000Z \(effective plan: free\)/);
    expect(lapsed.stderr).toMatch(/in the past/);

    const missing = await admin('set-plan', 'nobody@example.com', 'pro');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user/);
  });

  it('show-user reports plan, effective plan, usage today and keys', async () => {
    const json = await admin('show-user', 'alice@example.com', '--json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({
      email: 'alice@example.com',
      plan: 'pro',
      effective_plan: 'free',
      subscription_ends_at: '2001-02-03T00:00:00.000Z',
      usage_today: { day: today(), used: 7 },
    });
    expect(report.keys.map((k: { name: string }) => k.name)).toEqual(['default', 'dup A', 'dup B', hostileName]);
    const byName = Object.fromEntries(report.keys.map((k: { name: string }) => [k.name, k]));
    expect(byName.default).toMatchObject({ prefix: firstKey.slice(0, 12), revoked_at: null, last_used_at: null });
    expect(byName[hostileName].revoked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(byName['dup A'].revoked_at).toBeNull();
    expect(byName['dup B'].revoked_at).not.toBeNull();

    await admin('set-plan', 'alice@example.com', 'pro'); // no end date
    const text = await admin('show-user', 'alice@example.com');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^plan: +pro$/m);
    expect(text.stdout).toMatch(/^effective plan: +pro$/m);
    expect(text.stdout).toMatch(/^subscription ends at: +-$/m);
    expect(text.stdout).toMatch(/^usage today: +7 /m);
    expect(text.stdout).toContain(firstKey.slice(0, 12));
    expect(text.stdout).not.toContain(firstKey);
  });

  it('reset-password removes a web password and ends the web sessions; show-user reports both', async () => {
    await query(
      sql`INSERT INTO passwords (user_id, hash, updated_at) SELECT id, 'pbkdf2-sha256$100000$AA==$AA==', '2026-01-01T00:00:00.000Z' FROM users WHERE email = 'alice@example.com';
INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at)
  SELECT 'live', id, 't', '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z' FROM users WHERE email = 'alice@example.com';
INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at)
  SELECT 'expired', id, 't', '2000-01-01T00:00:00.000Z', '2000-01-02T00:00:00.000Z' FROM users WHERE email = 'alice@example.com';`,
      { persistTo: dir },
    );
    expect((await admin('show-user', 'alice@example.com')).stdout).toMatch(/^web password: +set \(1 live session\)$/m);

    const reset = await admin('reset-password', 'Alice@Example.com');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^alice@example.com: web password removed, 2 web sessions ended\./);
    const report = JSON.parse((await admin('show-user', 'alice@example.com', '--json')).stdout);
    expect(report).toMatchObject({ web_password_set: false, web_sessions: 0 });
    expect((await admin('reset-password', 'alice@example.com')).stdout).toMatch(/had no web password, 0 web sessions ended/);

    const missing = await admin('reset-password', 'nobody@example.com');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user/);
  });

  it('seeding is idempotent, restores the demo state and refuses --remote', async () => {
    const r = await seedFlow;
    expect(r.remote.code).toBe(2);
    expect(r.remote.stderr).toMatch(/remote/);
    expect(r.revokeOut.code).toBe(0);
    expect(r.secondSeed.code).toBe(0);
    expect(r.users).toBe(2);
    expect(r.keys).toBe(2);
    expect(r.rows).toEqual([
      { email: 'demo@free.local', plan: 'free', subscription_ends_at: null, name: 'demo', prefix: 'imgk_demofre', key_hash: sha256(DEMO_ACCOUNTS[0].key), revoked_at: null },
      { email: 'demo@pro.local', plan: 'pro', subscription_ends_at: null, name: 'demo', prefix: 'imgk_demopro', key_hash: sha256(DEMO_ACCOUNTS[1].key), revoked_at: null },
    ]);
  });
});
