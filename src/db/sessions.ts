import type { D1Reader, UserRow } from './users';

export interface SessionRow extends UserRow {
  csrf_token: string;
  expires_at: string;
}

export async function insertSession(
  db: D1Database,
  session: { idHash: string; userId: number; csrfToken: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db
    .prepare('INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)')
    .bind(session.idHash, session.userId, session.csrfToken, session.now.toISOString(), session.expiresAt.toISOString())
    .run();
}

/** The session with this id hash and its user, expired or not (the caller compares `expires_at` with its clock). */
export function findSession(db: D1Reader, idHash: string): Promise<SessionRow | null> {
  return db
    .prepare(
      `SELECT u.id, u.email, u.plan, u.subscription_ends_at, s.csrf_token, s.expires_at
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = ?1`,
    )
    .bind(idHash)
    .first<SessionRow>();
}

export async function deleteSession(db: D1Database, idHash: string): Promise<void> {
  await db.prepare('DELETE FROM sessions WHERE id_hash = ?1').bind(idHash).run();
}

export async function deleteExpiredSessions(db: D1Database, now: Date): Promise<void> {
  await db.prepare('DELETE FROM sessions WHERE expires_at <= ?1').bind(now.toISOString()).run();
}
