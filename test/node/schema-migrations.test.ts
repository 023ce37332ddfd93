import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';

/*
 * schema.sql (what tests and `npm run dev` load into a fresh database) and migrations/ (what a
 * deployed database is brought up to date with, `wrangler d1 migrations apply`) must describe
 * the same schema: applied in order to an empty database, the migrations give exactly the
 * tables, columns, keys and indexes of schema.sql.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const MIGRATIONS = path.join(ROOT, 'migrations');

function databaseFrom(...scripts: string[]): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  for (const script of scripts) db.exec(script);
  return db;
}

/** Every table's columns, foreign keys and indexes (with their columns), by name. */
function structure(db: DatabaseSync) {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  return Object.fromEntries(
    tables.map(({ name }) => {
      const indexes = (db.prepare(`PRAGMA index_list('${name}')`).all() as { name: string; unique: number; origin: string; partial: number }[])
        .map((index) => ({ ...index, columns: db.prepare(`PRAGMA index_info('${index.name}')`).all() }))
        .sort((a, b) => a.name.localeCompare(b.name));
      return [
        name,
        {
          columns: db.prepare(`PRAGMA table_info('${name}')`).all(),
          foreignKeys: db.prepare(`PRAGMA foreign_key_list('${name}')`).all(),
          indexes,
        },
      ];
    }),
  );
}

describe('D1 schema and migrations', () => {
  const migrations = readdirSync(MIGRATIONS)
    .filter((file) => file.endsWith('.sql'))
    .sort();

  it('numbers the migrations in order from 0001', () => {
    expect(migrations.length).toBeGreaterThan(0);
    migrations.forEach((file, index) => expect(file).toMatch(new RegExp(`^${String(index + 1).padStart(4, '0')}_[a-z0-9_]+\\.sql$`)));
  });

  it('gives exactly the schema of schema.sql when applied in order to an empty database', () => {
    const fromSchema = structure(databaseFrom(readFileSync(path.join(ROOT, 'schema.sql'), 'utf8')));
    const fromMigrations = structure(databaseFrom(...migrations.map((file) => readFileSync(path.join(MIGRATIONS, file), 'utf8'))));
    expect(Object.keys(fromSchema).length).toBeGreaterThan(5);
    expect(fromMigrations).toEqual(fromSchema);
  });

  it('can be applied to a database that schema.sql set up before migrations existed', () => {
    const schema = readFileSync(path.join(ROOT, 'schema.sql'), 'utf8');
    const first = readFileSync(path.join(MIGRATIONS, migrations[0]), 'utf8');
    expect(() => databaseFrom(schema, first)).not.toThrow();
  });
});
