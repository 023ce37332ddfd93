/**
 * Failure counters for log-in and sign-up, one row per subject ("account:<email>",
 * "address:<ip>"), each in a fixed window that starts at its first failure.
 */
export interface ThrottleRule {
  subject: string;
  maxFailures: number;
}

/** When the first of `rules` that is used up opens again, or null when none is. */
export async function blockedUntil(db: D1Database, rules: ThrottleRule[], now: Date): Promise<Date | null> {
  const placeholders = rules.map((_, i) => `?${i + 2}`).join(', ');
  const { results } = await db
    .prepare(`SELECT subject, failures, window_ends_at FROM login_throttle WHERE window_ends_at > ?1 AND subject IN (${placeholders})`)
    .bind(now.toISOString(), ...rules.map((rule) => rule.subject))
    .all<{ subject: string; failures: number; window_ends_at: string }>();
  let until: Date | null = null;
  for (const row of results) {
    const rule = rules.find((candidate) => candidate.subject === row.subject);
    const endsAt = new Date(row.window_ends_at);
    if (rule && row.failures >= rule.maxFailures && (!until || endsAt > until)) until = endsAt;
  }
  return until;
}

/** Counts one failure for each subject; a window that has ended starts again at 1. */
export async function recordFailure(db: D1Database, subjects: string[], now: Date, windowMs: number): Promise<void> {
  const windowEndsAt = new Date(now.getTime() + windowMs).toISOString();
  await db.batch(
    subjects.map((subject) =>
      db
        .prepare(
          `INSERT INTO login_throttle (subject, failures, window_ends_at) VALUES (?1, 1, ?2)
           ON CONFLICT (subject) DO UPDATE SET
             failures = CASE WHEN window_ends_at <= ?3 THEN 1 ELSE failures + 1 END,
             window_ends_at = CASE WHEN window_ends_at <= ?3 THEN ?2 ELSE window_ends_at END`,
        )
        .bind(subject, windowEndsAt, now.toISOString()),
    ),
  );
}

export async function clearFailures(db: D1Database, subject: string): Promise<void> {
  await db.prepare('DELETE FROM login_throttle WHERE subject = ?1').bind(subject).run();
}

export async function deleteEndedWindows(db: D1Database, now: Date): Promise<void> {
  await db.prepare('DELETE FROM login_throttle WHERE window_ends_at <= ?1').bind(now.toISOString()).run();
}
