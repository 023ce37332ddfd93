import { DurableObject } from 'cloudflare:workers';
import { parseSimulatedRtt, slowDatabase } from '../bindings/simulated-latency';
import { dailyUsed, recordDailyUsage, utcDay } from '../db/usage';
import { Ledger } from './ledger';
import { RateWindow } from './rate-window';

/** What every call of a user asks first; `now` is the app's clock (tests move it), `day` its UTC day. */
export interface CallerFacts {
  userId: number;
  now: number;
  day: string;
  /** "key:<id>" or "session:<id hash>": refused once revoked on the web pages. */
  credential: string;
}

export interface AdmitRequest extends CallerFacts {
  requestsPerSecond: number;
  /** Concurrent processing calls allowed; null: the call holds no slot (GET /me). */
  maxConcurrent: number | null;
  /** Reserve one of the day's conversions under this limit (null: unlimited, still counted); absent: reserve none. */
  reserve?: { dailyLimit: number | null };
}

export type Admission =
  | { admitted: true; leaseId: string | null; used: number }
  | { admitted: false; reason: 'unauthorized' }
  | { admitted: false; reason: 'rate' | 'concurrency'; retryAfterSeconds: number; used: number }
  | { admitted: false; reason: 'quota'; used: number };

export interface ClaimRequest extends CallerFacts {
  leaseId: string;
  key: string;
  fingerprint: string;
  dailyLimit: number | null;
}

export type Claim =
  | { kind: 'claimed'; used: number }
  | { kind: 'replay'; response: string }
  | { kind: 'reused' }
  | { kind: 'running' }
  | { kind: 'quota'; used: number };

export interface FinishRequest {
  leaseId: string;
  /** The day of the reserved conversion, should the lease have lapsed meanwhile. */
  day: string;
  /** The call succeeded and its client got the link: the reserved conversion is spent. */
  charged: boolean;
  /** The Idempotency-Key the call claimed, and on success the answer to replay until `expiresAt`. */
  idempotency?: { key: string; response?: string; expiresAt?: number };
}

// A Worker that dies mid-call never finishes its lease; leases end by themselves after the longest a call can take.
const LEASE_MS = 5 * 60_000;
// D1 gets the day's count this long after a charge, so a burst is one write.
const FLUSH_DELAY_MS = 500;
const MAX_FLUSH_RETRY_MS = 5 * 60_000;
// A credential revoked on the web pages is refused here for as long as any isolate may still have it cached.
export const REVOCATION_MEMORY_MS = 24 * 3_600_000;
const DAYS_KEPT_MS = 7 * 86_400_000;

/**
 * One per user (idFromName("user:<id>")), so every call of the user passes one place, in order:
 * the request rate, the concurrency slots and the daily quota are decided together in one call
 * (`admit`), and the running count of conversions is kept in the object's own storage, which
 * commits beside it. D1 gets each charged conversion behind the answer, from the object's alarm,
 * retried until it lands. The rate window is in memory (it only has to outlive a second).
 */
export class UserGate extends DurableObject<Env> {
  private readonly ledger: Ledger;
  private readonly window = new RateWindow();
  private readonly db: D1Database;
  /** The object never lets its time run backwards (callers' clocks differ by milliseconds). */
  private latest = 0;
  private starting: Promise<void> | null = null;
  private flushFailures = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.ledger = new Ledger(ctx.storage.sql);
    this.db = slowDatabase(env.DB, parseSimulatedRtt(env.SIMULATED_RTT_MS));
  }

  async admit(request: AdmitRequest): Promise<Admission> {
    await this.started(request);
    const now = this.advance(request.now);
    if (this.ledger.isRevoked(request.credential, now)) return { admitted: false, reason: 'unauthorized' };
    this.ledger.expireLeases(now);
    const used = this.ledger.used(request.day);
    const rateWait = this.window.retryAfter(now, request.requestsPerSecond);
    if (rateWait !== null) return { admitted: false, reason: 'rate', retryAfterSeconds: rateWait, used };
    if (request.maxConcurrent !== null && this.ledger.slotsInUse() >= request.maxConcurrent) {
      return { admitted: false, reason: 'concurrency', retryAfterSeconds: 1, used };
    }
    this.window.add(now);
    if (request.reserve && !withinLimit(used, request.reserve.dailyLimit)) return { admitted: false, reason: 'quota', used };
    if (request.maxConcurrent === null) return { admitted: true, leaseId: null, used };
    const leaseId = crypto.randomUUID();
    this.ledger.openLease(leaseId, now + LEASE_MS, request.reserve ? request.day : null);
    return { admitted: true, leaseId, used: used + (request.reserve ? 1 : 0) };
  }

  /**
   * An Idempotency-Key call, once its upload's fingerprint is known: the stored answer of the
   * same request, a refusal, or the key claimed with one of the day's conversions reserved.
   * Anything but a claim ends the lease: no work follows.
   */
  async claim(request: ClaimRequest): Promise<Claim> {
    await this.started(request);
    const now = this.advance(request.now);
    const record = this.ledger.idempotencyRecord(request.key, now);
    const answer = record ? claimAnswer(record, request.fingerprint) : null;
    if (answer) {
      this.ledger.closeLease(request.leaseId);
      return answer;
    }
    const used = this.ledger.used(request.day);
    if (!withinLimit(used, request.dailyLimit)) {
      this.ledger.closeLease(request.leaseId);
      return { kind: 'quota', used };
    }
    if (!this.ledger.reserve(request.leaseId, request.day)) this.ledger.openLease(request.leaseId, now + LEASE_MS, request.day);
    this.ledger.claimKey(request.key, request.fingerprint, request.leaseId, now + LEASE_MS);
    return { kind: 'claimed', used: used + 1 };
  }

  /** The end of a processing call: its slot goes back, and its conversion is spent or given back. */
  async finish(request: FinishRequest): Promise<void> {
    const lease = this.ledger.closeLease(request.leaseId);
    const day = lease ? lease.reservedDay : request.day;
    if (request.charged && day !== null) {
      this.ledger.charge(day);
      await this.scheduleFlush();
    }
    const { idempotency } = request;
    if (!idempotency) return;
    if (request.charged && idempotency.response !== undefined && idempotency.expiresAt !== undefined) {
      this.ledger.answerKey(idempotency.key, request.leaseId, idempotency.response, idempotency.expiresAt);
    } else {
      this.ledger.dropClaim(idempotency.key, request.leaseId);
    }
  }

  /** Today's conversions (for pages that show the quota; they spend no request rate). */
  async usage(request: CallerFacts): Promise<number> {
    await this.started(request);
    return this.ledger.used(request.day);
  }

  /** A key revoked or a session ended on the web pages: refused here from now on. */
  revoke(request: { credential: string; now: number }): void {
    this.ledger.revoke(request.credential, this.advance(request.now) + REVOCATION_MEMORY_MS);
  }

  /** Sends D1 the counts it lacks; retried (backing off) until it lands. */
  override async alarm(): Promise<void> {
    const userId = Number(this.ledger.fact('user_id'));
    const pending = this.ledger.unflushed();
    if (pending.length > 0 && userId > 0) {
      try {
        await recordDailyUsage(this.db, userId, pending);
        for (const { day, settled } of pending) this.ledger.markFlushed(day, settled);
        this.flushFailures = 0;
      } catch (error) {
        console.error(JSON.stringify({ user_gate: userId, error: `writing daily usage to D1 failed: ${String(error)}` }));
        this.flushFailures++;
        await this.ctx.storage.setAlarm(Date.now() + Math.min(MAX_FLUSH_RETRY_MS, 1000 * 2 ** this.flushFailures));
        return;
      }
    }
    const now = Date.now();
    this.ledger.prune(now, utcDay(new Date(now - DAYS_KEPT_MS)));
    // Charges that came while D1 was being written.
    if (this.ledger.unflushed().length > 0) await this.ctx.storage.setAlarm(Date.now() + FLUSH_DELAY_MS);
  }

  private async scheduleFlush(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + FLUSH_DELAY_MS);
  }

  /**
   * The first call an object ever gets takes the day's count D1 already has (conversions counted
   * before this object kept the count, or by the operator); after that the object is the count's
   * keeper, and a new day starts at zero without asking D1.
   */
  private async started(caller: CallerFacts): Promise<void> {
    if (this.ledger.fact('user_id') !== null) return;
    this.starting ??= (async () => {
      const used = await dailyUsed(this.db, caller.userId, caller.day);
      this.ledger.startFrom(caller.day, used);
      this.ledger.setFact('user_id', String(caller.userId));
    })().finally(() => (this.starting = null));
    await this.starting;
  }

  private advance(now: number): number {
    this.latest = Math.max(this.latest, now);
    return this.latest;
  }
}

function withinLimit(used: number, limit: number | null): boolean {
  return limit === null || used < limit;
}

function claimAnswer(record: { fingerprint: string; response: string | null }, fingerprint: string): Claim | null {
  if (record.fingerprint !== fingerprint) return { kind: 'reused' };
  if (record.response === null) return { kind: 'running' };
  return { kind: 'replay', response: record.response };
}
