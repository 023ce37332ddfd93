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
 * Writes each day's count as the user's Durable Object keeps it (src/user-gate), which is the
 * keeper of the running count: a count only grows within its day, so the larger of the two is kept
 * and a retried or late write can never lower it.
 */
export async function recordDailyUsage(db: D1Database, userId: number, days: { day: string; settled: number }[]): Promise<void> {
  if (days.length === 0) return;
  await db.batch(
    days.map(({ day, settled }) =>
      db
        .prepare(
          `INSERT INTO daily_usage (user_id, day, used) VALUES (?1, ?2, ?3)
           ON CONFLICT (user_id, day) DO UPDATE SET used = MAX(used, excluded.used)`,
        )
        .bind(userId, day, settled),
    ),
  );
}
