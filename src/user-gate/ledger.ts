/**
 * What a user's Durable Object keeps in its own SQLite storage, which commits beside it (no far
 * round trip): today's conversions, the calls in flight (concurrency slots and the conversion each
 * has reserved), Idempotency-Key records, and credentials revoked on the web pages. Plain
 * synchronous queries: a method that only reads and writes this ledger runs whole, with no other
 * call between its statements.
 */
export interface IdempotencyRecord {
  fingerprint: string;
  /** null while the first call with the key runs. */
  response: string | null;
}

export class Ledger {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS facts (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      -- settled: conversions charged on the day; flushed: how many of them D1 has.
      CREATE TABLE IF NOT EXISTS usage (day TEXT PRIMARY KEY, settled INTEGER NOT NULL, flushed INTEGER NOT NULL);
      -- A call in flight: it holds a concurrency slot, and day is the day of the conversion it reserved (NULL: none yet).
      CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, day TEXT, expires_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, lease_id TEXT, response TEXT, expires_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS idempotency_expires ON idempotency (expires_at);
      CREATE TABLE IF NOT EXISTS revoked (credential TEXT PRIMARY KEY, until INTEGER NOT NULL);
    `);
  }

  fact(name: string): string | null {
    return this.sql.exec<{ value: string }>('SELECT value FROM facts WHERE name = ?', name).toArray()[0]?.value ?? null;
  }

  setFact(name: string, value: string): void {
    this.sql.exec('INSERT INTO facts (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', name, value);
  }

  /** Conversions counted on `day`: the charged ones and the ones reserved by calls still in flight. */
  used(day: string): number {
    const settled = this.sql.exec<{ settled: number }>('SELECT settled FROM usage WHERE day = ?', day).toArray()[0]?.settled ?? 0;
    const reserved = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM leases WHERE day = ?', day).one().n;
    return settled + reserved;
  }

  /** The count D1 already holds for `day`, taken as this ledger's starting point. */
  startFrom(day: string, used: number): void {
    this.sql.exec('INSERT INTO usage (day, settled, flushed) VALUES (?, ?, ?) ON CONFLICT (day) DO NOTHING', day, used, used);
  }

  charge(day: string): void {
    this.sql.exec('INSERT INTO usage (day, settled, flushed) VALUES (?, 1, 0) ON CONFLICT (day) DO UPDATE SET settled = settled + 1', day);
  }

  unflushed(): { day: string; settled: number }[] {
    return this.sql.exec<{ day: string; settled: number }>('SELECT day, settled FROM usage WHERE settled > flushed ORDER BY day').toArray();
  }

  markFlushed(day: string, settled: number): void {
    this.sql.exec('UPDATE usage SET flushed = MAX(flushed, ?) WHERE day = ?', settled, day);
  }

  /** Ends the leases of calls that never said they finished (a Worker that died). */
  expireLeases(now: number): void {
    this.sql.exec('DELETE FROM leases WHERE expires_at <= ?', now);
  }

  slotsInUse(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM leases').one().n;
  }

  openLease(id: string, expiresAt: number, reservedDay: string | null): void {
    this.sql.exec('INSERT INTO leases (id, day, expires_at) VALUES (?, ?, ?)', id, reservedDay, expiresAt);
  }

  /** Reserves a conversion of `day` for a lease; false when the lease is gone. */
  reserve(leaseId: string, day: string): boolean {
    return this.sql.exec('UPDATE leases SET day = ? WHERE id = ?', day, leaseId).rowsWritten > 0;
  }

  /** Ends a lease; returns whether it existed and the day of the conversion it had reserved. */
  closeLease(id: string): { reservedDay: string | null } | null {
    const row = this.sql.exec<{ day: string | null }>('DELETE FROM leases WHERE id = ? RETURNING day', id).toArray()[0];
    return row ? { reservedDay: row.day } : null;
  }

  /** The key's record, unless it has expired or its first call ended without an answer (a claim that lapsed). */
  idempotencyRecord(key: string, now: number): IdempotencyRecord | null {
    const row = this.sql
      .exec<{ fingerprint: string; response: string | null; lease_id: string | null; expires_at: number }>(
        'SELECT fingerprint, response, lease_id, expires_at FROM idempotency WHERE key = ?',
        key,
      )
      .toArray()[0];
    if (!row) return null;
    const lapsed = row.response === null && (row.lease_id === null || this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM leases WHERE id = ?', row.lease_id).one().n === 0);
    if (row.expires_at <= now || lapsed) {
      this.sql.exec('DELETE FROM idempotency WHERE key = ?', key);
      return null;
    }
    return { fingerprint: row.fingerprint, response: row.response };
  }

  claimKey(key: string, fingerprint: string, leaseId: string, expiresAt: number): void {
    this.sql.exec(
      `INSERT INTO idempotency (key, fingerprint, lease_id, response, expires_at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, lease_id = excluded.lease_id, response = NULL, expires_at = excluded.expires_at`,
      key,
      fingerprint,
      leaseId,
      expiresAt,
    );
  }

  answerKey(key: string, leaseId: string, response: string, expiresAt: number): void {
    this.sql.exec('UPDATE idempotency SET response = ?, lease_id = NULL, expires_at = ? WHERE key = ? AND lease_id = ?', response, expiresAt, key, leaseId);
  }

  dropClaim(key: string, leaseId: string): void {
    this.sql.exec('DELETE FROM idempotency WHERE key = ? AND lease_id = ? AND response IS NULL', key, leaseId);
  }

  isRevoked(credential: string, now: number): boolean {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM revoked WHERE credential = ? AND until > ?', credential, now).one().n > 0;
  }

  revoke(credential: string, until: number): void {
    this.sql.exec('INSERT INTO revoked (credential, until) VALUES (?, ?) ON CONFLICT (credential) DO UPDATE SET until = MAX(until, excluded.until)', credential, until);
  }

  /** Deletes what can no longer matter: expired records and revocations, and days before `oldestKept` that D1 has whole. */
  prune(now: number, oldestKept: string): void {
    this.sql.exec('DELETE FROM idempotency WHERE expires_at <= ?', now);
    this.sql.exec('DELETE FROM revoked WHERE until <= ?', now);
    this.sql.exec('DELETE FROM usage WHERE day < ? AND flushed >= settled', oldestKept);
  }
}
