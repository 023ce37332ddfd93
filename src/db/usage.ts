/** The UTC calendar day a moment belongs to; the daily quota resets at 00:00 UTC. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Start of the next UTC day, when today's quota resets. */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

export async function dailyUsed(db: D1Database, userId: number, day: string): Promise<number> {
  const row = await db.prepare('SELECT used FROM daily_usage WHERE user_id = ?1 AND day = ?2').bind(userId, day).first<{ used: number }>();
  return row?.used ?? 0;
}

/**
 * Takes one conversion from today's quota in a single statement, so parallel calls can
 * never overshoot: the upsert only increments while `used < limit`. Returns the new count,
 * or null when the limit was already reached. `limit` null = unlimited (still counted).
 */
export async function reserveConversion(db: D1Database, userId: number, day: string, limit: number | null): Promise<number | null> {
  if (limit !== null && limit < 1) return null;
  const row = await db
    .prepare(
      `INSERT INTO daily_usage (user_id, day, used) VALUES (?1, ?2, 1)
       ON CONFLICT (user_id, day) DO UPDATE SET used = used + 1
        WHERE ?3 IS NULL OR daily_usage.used < ?3
       RETURNING used`,
    )
    .bind(userId, day, limit)
    .first<{ used: number }>();
  return row?.used ?? null;
}

/** Gives back a conversion reserved on `day` whose call then failed. */
export async function releaseConversion(db: D1Database, userId: number, day: string): Promise<void> {
  await db.prepare('UPDATE daily_usage SET used = used - 1 WHERE user_id = ?1 AND day = ?2 AND used > 0').bind(userId, day).run();
}
