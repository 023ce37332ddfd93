import type { PlanName } from '../plans';

/** Where a read can go: the primary (the database itself) or a read replica (a Sessions API session). */
export type D1Reader = Pick<D1Database, 'prepare'>;

export interface UserRow {
  id: number;
  email: string;
  plan: PlanName;
  subscription_ends_at: string | null;
}

export interface ApiKeyOwner extends UserRow {
  key_id: number;
  key_last_used_at: string | null;
}

/** The owner of a live (not revoked) key, looked up by the key's SHA-256 hash. */
export function findUserByKeyHash(db: D1Reader, keyHash: string): Promise<ApiKeyOwner | null> {
  return db
    .prepare(
      `SELECT u.id, u.email, u.plan, u.subscription_ends_at, k.id AS key_id, k.last_used_at AS key_last_used_at
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = ?1 AND k.revoked_at IS NULL`,
    )
    .bind(keyHash)
    .first<ApiKeyOwner>();
}

export async function touchApiKey(db: D1Database, keyId: number, now: Date): Promise<void> {
  await db.prepare('UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1').bind(keyId, now.toISOString()).run();
}

export async function createUser(
  db: D1Database,
  user: { email: string; plan?: PlanName; subscriptionEndsAt?: string | null },
): Promise<UserRow> {
  const row = await db
    .prepare('INSERT INTO users (email, plan, subscription_ends_at) VALUES (?1, ?2, ?3) RETURNING id, email, plan, subscription_ends_at')
    .bind(user.email.toLowerCase(), user.plan ?? 'free', user.subscriptionEndsAt ?? null)
    .first<UserRow>();
  if (!row) throw new Error('INSERT ... RETURNING gave no row');
  return row;
}

export async function insertApiKey(
  db: D1Database,
  key: { userId: number; name: string; prefix: string; keyHash: string },
): Promise<number> {
  const row = await db
    .prepare('INSERT INTO api_keys (user_id, name, prefix, key_hash) VALUES (?1, ?2, ?3, ?4) RETURNING id')
    .bind(key.userId, key.name, key.prefix, key.keyHash)
    .first<{ id: number }>();
  if (!row) throw new Error('INSERT ... RETURNING gave no row');
  return row.id;
}

/**
 * Inserts a key only while the user has fewer than `maxLive` live keys, in one statement: D1
 * runs statements one at a time, so parallel creations cannot all see room under the cap.
 * Returns the new key's id, or null when the cap is reached.
 */
export async function insertApiKeyUnderCap(
  db: D1Database,
  key: { userId: number; name: string; prefix: string; keyHash: string },
  maxLive: number,
): Promise<number | null> {
  const row = await db
    .prepare(
      `INSERT INTO api_keys (user_id, name, prefix, key_hash)
       SELECT ?1, ?2, ?3, ?4
        WHERE (SELECT COUNT(*) FROM api_keys WHERE user_id = ?1 AND revoked_at IS NULL) < ?5
       RETURNING id`,
    )
    .bind(key.userId, key.name, key.prefix, key.keyHash, maxLive)
    .first<{ id: number }>();
  return row?.id ?? null;
}

export interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

/** A user's live keys, newest first. */
export async function listApiKeys(db: D1Database, userId: number): Promise<ApiKeyRow[]> {
  const { results } = await db
    .prepare('SELECT id, name, prefix, created_at, last_used_at FROM api_keys WHERE user_id = ?1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC')
    .bind(userId)
    .all<ApiKeyRow>();
  return results;
}

/** Revokes one of the user's own live keys; false when there is no such key (or it is someone else's). */
export async function revokeApiKey(db: D1Database, userId: number, keyId: number, now: Date): Promise<boolean> {
  const outcome = await db
    .prepare('UPDATE api_keys SET revoked_at = ?3 WHERE id = ?1 AND user_id = ?2 AND revoked_at IS NULL')
    .bind(keyId, userId, now.toISOString())
    .run();
  return outcome.meta.changes > 0;
}
