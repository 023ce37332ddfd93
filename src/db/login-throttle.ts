/**
 * Attempt counters for log-in and sign-up, one row per subject (e.g. "account:<email>"),
 * each in a fixed window that starts at its first attempt.
 */
export interface ThrottleRule {
  subject: string;
  maxAttempts: number;
  windowMs: number;
}

/**
 * Counts one attempt against every rule in one atomic batch and returns when the first rule
 * that is now over its limit opens again, or null when all are within. Counting before the
 * work (not after a failure) is what keeps parallel requests from slipping past the limit.
 */
export async function takeAttempt(db: D1Database, rules: ThrottleRule[], now: Date): Promise<Date | null> {
  const rows = await db.batch<{ attempts: number; window_ends_at: string }>(
    rules.map((rule) =>
      db
        .prepare(
          `INSERT INTO login_throttle (subject, attempts, window_ends_at) VALUES (?1, 1, ?2)
           ON CONFLICT (subject) DO UPDATE SET
             attempts = CASE WHEN window_ends_at <= ?3 THEN 1 ELSE attempts + 1 END,
             window_ends_at = CASE WHEN window_ends_at <= ?3 THEN ?2 ELSE window_ends_at END
           RETURNING attempts, window_ends_at`,
        )
        .bind(rule.subject, new Date(now.getTime() + rule.windowMs).toISOString(), now.toISOString()),
    ),
  );
  let until: Date | null = null;
  rules.forEach((rule, i) => {
    const row = rows[i].results[0];
    const endsAt = row ? new Date(row.window_ends_at) : null;
    if (row && endsAt && row.attempts > rule.maxAttempts && (!until || endsAt > until)) until = endsAt;
  });
  return until;
}

/** Takes back one counted attempt (a log-in that turned out right must not count as a failure). */
export async function giveBackAttempt(db: D1Database, subject: string): Promise<void> {
  await db.prepare('UPDATE login_throttle SET attempts = attempts - 1 WHERE subject = ?1 AND attempts > 0').bind(subject).run();
}

export async function clearAttempts(db: D1Database, subject: string): Promise<void> {
  await db.prepare('DELETE FROM login_throttle WHERE subject = ?1').bind(subject).run();
}

export async function deleteEndedWindows(db: D1Database, now: Date): Promise<void> {
  await db.prepare('DELETE FROM login_throttle WHERE window_ends_at <= ?1').bind(now.toISOString()).run();
}
