import { liveBindings, liveCondition, type Credential } from '../auth/credentials';

export interface ResultRow {
  uuid: string;
  user_id: number;
  operation: string;
  format: string;
  filename: string;
  size: number;
  width: number;
  height: number;
  created_at: string;
  expires_at: string;
}

/**
 * Records a result, in one statement, only while the credential that asked for it is live: a key
 * revoked or a session ended anywhere, by a page or by the operator, stops the next conversion here
 * at the latest, on the D1 primary. Returns false (nothing written) when it is not live.
 */
export async function insertResultForLiveCredential(db: D1Database, row: ResultRow, credential: Credential, now: Date): Promise<boolean> {
  const outcome = await db
    .prepare(
      `INSERT INTO results (uuid, user_id, operation, format, filename, size, width, height, created_at, expires_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE ${liveCondition(credential, 11)}`,
    )
    .bind(row.uuid, row.user_id, row.operation, row.format, row.filename, row.size, row.width, row.height, row.created_at, row.expires_at, ...liveBindings(credential, now))
    .run();
  return outcome.meta.changes > 0;
}

/** A result that has not expired yet; expired rows are invisible even before the cleanup job runs. */
export function findLiveResult(db: D1Database, uuid: string, now: Date): Promise<ResultRow | null> {
  return db.prepare('SELECT * FROM results WHERE uuid = ?1 AND expires_at > ?2').bind(uuid, now.toISOString()).first<ResultRow>();
}

export async function listExpiredResults(db: D1Database, now: Date, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare('SELECT uuid FROM results WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2')
    .bind(now.toISOString(), limit)
    .all<{ uuid: string }>();
  return results.map((row) => row.uuid);
}

export async function deleteResults(db: D1Database, uuids: string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db.batch(uuids.map((uuid) => db.prepare('DELETE FROM results WHERE uuid = ?1').bind(uuid)));
}

/** The user's results that can still be downloaded, newest first. */
export async function listLiveResults(db: D1Database, userId: number, now: Date, limit: number): Promise<ResultRow[]> {
  const { results } = await db
    .prepare('SELECT * FROM results WHERE user_id = ?1 AND expires_at > ?2 ORDER BY created_at DESC LIMIT ?3')
    .bind(userId, now.toISOString(), limit)
    .all<ResultRow>();
  return results;
}
