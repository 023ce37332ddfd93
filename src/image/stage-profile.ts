import { forward, type RowSource } from './stages/rows';

/**
 * Where one run's time goes, stage by stage, for `npm run bench` (diagnostic headers only). Bands
 * are pulled through the stages, so a stage's read includes the reads of the stages before it: each
 * stage's own time is its reads minus its source's. Turns taken for other requests (run-context.ts)
 * are not any stage's work and are counted apart.
 * Local workerd's clock advances while code runs; a deployed Worker's does not (it moves only at
 * I/O), so there these figures would read 0.
 */
export class StageProfile {
  /** Stages in the order they pull; null where a held picture starts a new chain (restartChain). */
  private readonly chain: ({ name: string; readMs: number } | null)[] = [];
  private readonly stepsMs: Record<string, number> = {};
  private turnsMs = 0;
  private copiesMs = 0;
  private encodeMs = 0;

  /** The profile's clock: wall time minus the turns taken so far. */
  now(): number {
    return performance.now() - this.turnsMs;
  }

  /** Records the time of a turn of the event loop (called by run-context.ts around each turn). */
  turned(ms: number): void {
    this.turnsMs += ms;
  }

  /** `source` as stage `name`: the next in the chain after the stage wrapped before it. */
  stage(name: string, source: RowSource): RowSource {
    const entry = { name, readMs: 0 };
    this.chain.push(entry);
    return {
      ...forward(source),
      read: async () => {
        const started = this.now();
        const band = await source.read();
        entry.readMs += this.now() - started;
        return band;
      },
    };
  }

  /**
   * The stages wrapped from now on read from a picture held whole (a thumbnail's smart crop), not
   * from the stages wrapped before, whose reads all ended before it: their own times start again.
   */
  restartChain(): void {
    this.chain.push(null);
  }

  /** A step outside the chain of bands (scoring a smart crop); stages it pulls keep their own times. */
  async step<T>(name: string, job: () => Promise<T>): Promise<T> {
    const started = this.now();
    try {
      return await job();
    } finally {
      this.stepsMs[name] = (this.stepsMs[name] ?? 0) + this.now() - started;
    }
  }

  /** The encoder's whole run (it pulls every stage's bands). */
  async encode<T>(job: () => Promise<T>): Promise<T> {
    const started = this.now();
    try {
      return await job();
    } finally {
      this.encodeMs += this.now() - started;
    }
  }

  /** A copy of pixels between JavaScript and a codec's WebAssembly memory. */
  copy(job: () => void): void {
    const started = performance.now();
    job();
    this.copiesMs += performance.now() - started;
  }

  /** Milliseconds per stage (own time) and step, the copies (inside decode and encode), and the turns. */
  result(): Record<string, number> {
    const stages: Record<string, number> = {};
    let before = 0;
    for (const entry of this.chain) {
      if (entry === null) {
        before = 0;
        continue;
      }
      stages[entry.name] = entry.readMs - before;
      before = entry.readMs;
    }
    Object.assign(stages, this.stepsMs);
    stages.encode = this.encodeMs - before;
    stages.copies = this.copiesMs;
    stages.turns = this.turnsMs;
    return stages;
  }
}
