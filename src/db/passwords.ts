import type { UserRow } from './users';

export interface LoginCandidate extends UserRow {
  /** null: the operator created the account and nobody has set a password yet. */
  password_hash: string | null;
}

export function findLoginCandidate(db: D1Database, email: string): Promise<LoginCandidate | null> {
  return db
    .prepare(
      `SELECT u.id, u.email, u.plan, u.subscription_ends_at, p.hash AS password_hash
         FROM users u LEFT JOIN passwords p ON p.user_id = u.id
        WHERE u.email = ?1`,
    )
    .bind(email)
    .first<LoginCandidate>();
}

/**
 * A new Free user with a password, in one transaction. Returns null when the e-mail is
 * taken (also when a parallel sign-up won the race).
 */
export async function createUserWithPassword(db: D1Database, email: string, passwordHash: string, now: Date): Promise<UserRow | null> {
  try {
    const [user] = await db.batch<UserRow>([
      db.prepare("INSERT INTO users (email, plan) VALUES (?1, 'free') RETURNING id, email, plan, subscription_ends_at").bind(email),
      db.prepare('INSERT INTO passwords (user_id, hash, updated_at) SELECT id, ?2, ?3 FROM users WHERE email = ?1').bind(email, passwordHash, now.toISOString()),
    ]);
    return user.results[0] ?? null;
  } catch (error) {
    if (/UNIQUE constraint failed/i.test(String(error))) return null;
    throw error;
  }
}

/** Sets the first password of an operator-made account; false when one was set meanwhile (never overwrites). */
export async function setFirstPassword(db: D1Database, userId: number, passwordHash: string, now: Date): Promise<boolean> {
  const outcome = await db
    .prepare('INSERT INTO passwords (user_id, hash, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (user_id) DO NOTHING')
    .bind(userId, passwordHash, now.toISOString())
    .run();
  return outcome.meta.changes > 0;
}
