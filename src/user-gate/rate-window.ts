const WINDOW_MS = 1000;

/**
 * The requests admitted in the last second, oldest first: a sliding one-second window. Kept in
 * memory: it only has to outlive a second, and an object that restarts starts counting afresh.
 */
export class RateWindow {
  private admittedAt: number[] = [];

  /** Seconds until one more request fits under `perSecond`, or null when it fits now. */
  retryAfter(now: number, perSecond: number): number | null {
    while (this.admittedAt.length > 0 && this.admittedAt[0] <= now - WINDOW_MS) this.admittedAt.shift();
    if (this.admittedAt.length < perSecond) return null;
    return Math.max(1, Math.ceil((this.admittedAt[0] + WINDOW_MS - now) / 1000));
  }

  add(now: number): void {
    this.admittedAt.push(now);
  }
}
