import { DurableObject } from 'cloudflare:workers';

export interface AdmissionRequest {
  requestsPerSecond: number;
  /** Concurrent processing slots allowed; null = the call holds no slot (e.g. GET /me). */
  maxConcurrent: number | null;
  /**
   * The caller's time in ms (the app's clock, which tests drive). Workers' clocks are kept in
   * step, and a few ms between isolates is far below the one-second window; the object never
   * lets its own time run backwards.
   */
  now: number;
}

export type Admission =
  | { admitted: true; leaseId: string | null }
  | { admitted: false; reason: 'rate' | 'concurrency'; retryAfterSeconds: number };

const WINDOW_MS = 1000;
// A Worker that dies mid-request never releases its slot; leases end by themselves.
const LEASE_MS = 2 * 60_000;

/**
 * One instance per user (idFromName(user id)), so a user's requests are counted in one
 * place and in order. The state is deliberately in memory: it only has to outlive a second
 * (rate) or a request (slots), and an evicted instance simply starts counting afresh.
 */
export class RateLimiter extends DurableObject {
  /** Times of the admitted requests within the last second, oldest first. */
  private admittedAt: number[] = [];
  private leases = new Map<string, number>();
  private latest = 0;

  admit(request: AdmissionRequest): Admission {
    const now = (this.latest = Math.max(this.latest, request.now));
    while (this.admittedAt.length > 0 && this.admittedAt[0] <= now - WINDOW_MS) this.admittedAt.shift();
    if (this.admittedAt.length >= request.requestsPerSecond) {
      const waitMs = this.admittedAt[0] + WINDOW_MS - now;
      return { admitted: false, reason: 'rate', retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    let leaseId: string | null = null;
    if (request.maxConcurrent !== null) {
      for (const [id, expiresAt] of this.leases) if (expiresAt <= now) this.leases.delete(id);
      if (this.leases.size >= request.maxConcurrent) return { admitted: false, reason: 'concurrency', retryAfterSeconds: 1 };
      leaseId = crypto.randomUUID();
      this.leases.set(leaseId, now + LEASE_MS);
    }
    this.admittedAt.push(now);
    return { admitted: true, leaseId };
  }

  release(leaseId: string): void {
    this.leases.delete(leaseId);
  }
}
