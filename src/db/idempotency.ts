export type IdempotencyClaim =
  /** `claimedAt` tells this claim from a later one on the same key, should this one lapse. */
  | { kind: 'claimed'; claimedAt: string }
  | { kind: 'running'; fingerprint: string }
  | { kind: 'answered'; fingerprint: string; response: string };

/**
 * Claims `key` for a call, in one statement: a new key, or one whose record has expired, is
 * taken; otherwise the record that holds it is returned. D1 runs statements one at a time, so of
 * two calls racing with the same key exactly one gets the claim.
 */
export async function claimIdempotencyKey(
  db: D1Database,
  claim: { userId: number; key: string; fingerprint: string; now: Date; claimExpiresAt: Date },
): Promise<IdempotencyClaim> {
  const now = claim.now.toISOString();
  const taken = await db
    .prepare(
      `INSERT INTO idempotency_keys (user_id, key, fingerprint, response, created_at, expires_at) VALUES (?1, ?2, ?3, NULL, ?4, ?5)
       ON CONFLICT (user_id, key) DO UPDATE
          SET fingerprint = excluded.fingerprint, response = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE idempotency_keys.expires_at <= ?4
       RETURNING created_at`,
    )
    .bind(claim.userId, claim.key, claim.fingerprint, now, claim.claimExpiresAt.toISOString())
    .first<{ created_at: string }>();
  if (taken) return { kind: 'claimed', claimedAt: taken.created_at };
  const held = await db
    .prepare('SELECT fingerprint, response FROM idempotency_keys WHERE user_id = ?1 AND key = ?2')
    .bind(claim.userId, claim.key)
    .first<{ fingerprint: string; response: string | null }>();
  // Expired and deleted between the two statements: as good as free, but claiming again could race; say it is running.
  if (!held) return { kind: 'running', fingerprint: claim.fingerprint };
  return held.response === null ? { kind: 'running', fingerprint: held.fingerprint } : { kind: 'answered', fingerprint: held.fingerprint, response: held.response };
}

export interface HeldClaim {
  userId: number;
  key: string;
  claimedAt: string;
}

/** Stores the answer of the call that holds the claim, to be replayed until `expiresAt`. */
export async function recordIdempotentAnswer(db: D1Database, claim: HeldClaim, response: string, expiresAt: Date): Promise<void> {
  await db
    .prepare('UPDATE idempotency_keys SET response = ?4, expires_at = ?5 WHERE user_id = ?1 AND key = ?2 AND created_at = ?3 AND response IS NULL')
    .bind(claim.userId, claim.key, claim.claimedAt, response, expiresAt.toISOString())
    .run();
}

/** Gives up a claim whose call failed, so that a retry with the same key runs afresh. */
export async function releaseIdempotencyKey(db: D1Database, claim: HeldClaim): Promise<void> {
  await db
    .prepare('DELETE FROM idempotency_keys WHERE user_id = ?1 AND key = ?2 AND created_at = ?3 AND response IS NULL')
    .bind(claim.userId, claim.key, claim.claimedAt)
    .run();
}

export async function deleteExpiredIdempotencyKeys(db: D1Database, now: Date): Promise<void> {
  await db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?1').bind(now.toISOString()).run();
}
