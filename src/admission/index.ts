/**
 * Admission by memory. A deployed isolate has 128 MB for all its requests, and the memory guard
 * predicts each pipeline run's peak before it decodes anything (src/image/memory-plan.ts). Runs go
 * ahead together while the sum of what they hold fits the budget; a run that would not fit waits,
 * in arrival order, until enough is released. Uploads already parsed are counted at once (they are
 * in memory whatever we decide). So a small request beside a large one starts at once instead of
 * queueing behind it, and what runs together never exceeds the budget. When nothing else is
 * running a run is always admitted, so a single request can never wait for nothing.
 */
export class MemoryAdmission {
  private held = 0;
  private running = 0;
  private readonly waiting: { bytes: number; start: () => void }[] = [];

  constructor(private readonly budgetBytes: () => number) {}

  /** Bytes counted now: held uploads and admitted runs. */
  get heldBytes(): number {
    return this.held;
  }

  /** Runs admitted and not yet finished. */
  get activeRuns(): number {
    return this.running;
  }

  /** Counts `bytes` already in memory (a parsed upload) until the returned function is called. */
  hold(bytes: number): () => void {
    this.held += bytes;
    return once(() => {
      this.held -= bytes;
      this.startWaiting();
    });
  }

  /**
   * Waits until a run needing `bytes` fits beside what is held (or nothing else runs), in arrival
   * order; returns the release. An aborted signal takes a waiting run out of the queue.
   */
  async admit(bytes: number, signal?: AbortSignal): Promise<() => void> {
    if (this.waiting.length > 0 || !this.fits(bytes)) {
      await new Promise<void>((resolve, reject) => {
        const entry = { bytes, start: resolve };
        this.waiting.push(entry);
        signal?.addEventListener('abort', () => {
          const index = this.waiting.indexOf(entry);
          if (index < 0) return;
          this.waiting.splice(index, 1);
          reject(signal.reason);
          this.startWaiting();
        }, { once: true });
      });
    } else {
      this.take(bytes);
    }
    return once(() => {
      this.held -= bytes;
      this.running--;
      this.startWaiting();
    });
  }

  private fits(bytes: number): boolean {
    return this.running === 0 || this.held + bytes <= this.budgetBytes();
  }

  private take(bytes: number): void {
    this.held += bytes;
    this.running++;
  }

  private startWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) {
      const next = this.waiting.shift()!;
      this.take(next.bytes);
      next.start();
    }
  }
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}
