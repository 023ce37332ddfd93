import { env } from 'cloudflare:test';
import schema from '../../schema.sql?raw';

// Storage is isolated per test file, so every file starts from the real schema.
const statements = schema
  .split(/;\s*$/m)
  .map((statement) => statement.replace(/^\s*--.*$/gm, '').trim())
  .filter((statement) => statement.length > 0 && !/^PRAGMA/i.test(statement));
await env.DB.batch(statements.map((statement) => env.DB.prepare(statement)));
