/// <reference types="node" />
/**
 * Idempotent seeding of the two demo accounts into the LOCAL database.
 *
 *   node src/cli/seed.ts [--schema] [--persist-to <dir>]
 *
 * Running it again restores the documented demo state (plan, key not revoked)
 * and never creates duplicates. It refuses to touch a remote database.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { D1Error, SCHEMA_FILE, execute, resolveTarget, sql } from './d1.ts';
import { storedKey } from './keys.ts';

export interface DemoAccount {
  email: string;
  plan: 'free' | 'pro';
  keyName: string;
  key: string;
}

/** Local-only demo accounts; the keys are constants printed by `npm run dev` and in the README. */
export const DEMO_ACCOUNTS: readonly DemoAccount[] = Object.freeze([
  { email: 'demo@free.local', plan: 'free', keyName: 'demo', key: 'imgk_demofree000000000000000000000000' },
  { email: 'demo@pro.local', plan: 'pro', keyName: 'demo', key: 'imgk_demopro0000000000000000000000000' },
]);

/** The seeding statements (one batch). */
export function seedSql(): string {
  const statements: string[] = [];
  for (const account of DEMO_ACCOUNTS) {
    const { prefix, keyHash } = storedKey(account.key);
    statements.push(
      sql`INSERT INTO users (email, plan, subscription_ends_at) VALUES (${account.email}, ${account.plan}, NULL)
  ON CONFLICT (email) DO UPDATE SET plan = excluded.plan, subscription_ends_at = NULL`,
      sql`INSERT INTO api_keys (user_id, name, prefix, key_hash)
  SELECT id, ${account.keyName}, ${prefix}, ${keyHash} FROM users WHERE email = ${account.email}
  ON CONFLICT (key_hash) DO UPDATE SET user_id = excluded.user_id, name = excluded.name, prefix = excluded.prefix, revoked_at = NULL`,
    );
  }
  return statements.join(';\n') + ';';
}

export interface SeedOptions {
  persistTo?: string;
  /** Must be false: seeding never touches a remote database. */
  remote?: boolean;
  /** Apply schema.sql in the same wrangler call (saves one wrangler start-up). */
  withSchema?: boolean;
}

/** Seeds the local database (optionally applying the schema first, in the same batch). */
export async function seedLocal(options: SeedOptions = {}): Promise<void> {
  if (options.remote) throw new Error('seeding never touches a remote database (--remote refused)');
  const target = resolveTarget({ remote: false, persistTo: options.persistTo });
  const schema = options.withSchema ? readFileSync(SCHEMA_FILE, 'utf8').trim() + '\n' : '';
  await execute(schema + seedSql(), target);
}

const USAGE = `Usage: node src/cli/seed.ts [--schema] [--persist-to <dir>]
Seeds the demo accounts into the LOCAL D1 database (idempotent).
  --schema            apply schema.sql first
  --persist-to <dir>  local persistence directory (default: $IMAGE_API_PERSIST_TO or .wrangler/state)`;

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'persist-to': { type: 'string' },
        schema: { type: 'boolean' },
        remote: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`seed: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (values.remote) {
    process.stderr.write('seed: refusing --remote: seeding never touches a remote database\n');
    return 2;
  }
  try {
    await seedLocal({ persistTo: values['persist-to'], withSchema: values.schema });
  } catch (err) {
    process.stderr.write(`seed: ${err instanceof D1Error ? err.message : String(err)}\n`);
    return 1;
  }
  for (const account of DEMO_ACCOUNTS) process.stdout.write(`seeded ${account.email} (${account.plan})\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
