export interface KeyReveal {
  key_id: number;
  name: string;
  sealed: string;
}

/** One pending reveal per session: a newer key replaces an older one not yet shown. */
export async function putKeyReveal(db: D1Database, reveal: { sessionIdHash: string; keyId: number; sealed: string; expiresAt: Date }): Promise<void> {
  await db
    .prepare(
      `INSERT INTO key_reveals (session_id_hash, key_id, sealed, expires_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (session_id_hash) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, expires_at = excluded.expires_at`,
    )
    .bind(reveal.sessionIdHash, reveal.keyId, reveal.sealed, reveal.expiresAt.toISOString())
    .run();
}

/** Takes the session's pending reveal (deleting it in the same statement), if it has not expired. */
export async function takeKeyReveal(db: D1Database, sessionIdHash: string, now: Date): Promise<KeyReveal | null> {
  const taken = await db
    .prepare('DELETE FROM key_reveals WHERE session_id_hash = ?1 RETURNING key_id, sealed, expires_at')
    .bind(sessionIdHash)
    .first<{ key_id: number; sealed: string; expires_at: string }>();
  if (!taken || Date.parse(taken.expires_at) <= now.getTime()) return null;
  const key = await db.prepare('SELECT name FROM api_keys WHERE id = ?1 AND revoked_at IS NULL').bind(taken.key_id).first<{ name: string }>();
  return key ? { key_id: taken.key_id, name: key.name, sealed: taken.sealed } : null;
}

export async function deleteExpiredKeyReveals(db: D1Database, now: Date): Promise<void> {
  await db.prepare('DELETE FROM key_reveals WHERE expires_at <= ?1').bind(now.toISOString()).run();
}
