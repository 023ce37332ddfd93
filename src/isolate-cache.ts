/**
 * A map kept in the isolate's memory for a stated time, for what every request would otherwise
 * fetch from a far store (Unkey's pattern: "zero network requests are always faster than one").
 * An entry is served for `freshMs` after the moment it was read, and reloaded in the background once
 * it is `refreshAfterMs` old, so steady traffic never waits for a reload and nothing older than
 * `freshMs` is ever served. Concurrent misses of one key share one load. At most `maxEntries` are
 * kept, the least recently read going first.
 */
export interface CachePolicy<V> {
  freshMs: (value: V) => number;
  refreshAfterMs: (value: V) => number;
  maxEntries: number;
}

export class IsolateCache<V> {
  private readonly entries = new Map<string, { value: V; readAt: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  /** Bumped by every forget: a load that began before it must not store what it read. */
  private generation = 0;

  constructor(private readonly policy: CachePolicy<V>) {}

  async get(key: string, now: number, load: () => Promise<V>, background: (work: Promise<unknown>) => void): Promise<V> {
    const entry = this.entries.get(key);
    if (entry) {
      const age = now - entry.readAt;
      if (age < this.policy.freshMs(entry.value)) {
        this.entries.delete(key);
        this.entries.set(key, entry);
        if (age >= this.policy.refreshAfterMs(entry.value) && !this.loading.has(key)) background(this.load(key, now, load).catch(() => {}));
        return entry.value;
      }
      this.entries.delete(key);
    }
    return this.load(key, now, load);
  }

  /** Drops every entry `matches` picks, and what loads already under way would bring back. */
  forget(matches: (value: V, key: string) => boolean): void {
    this.generation++;
    this.loading.clear();
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private load(key: string, now: number, load: () => Promise<V>): Promise<V> {
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const loaded = load()
      .then((value) => {
        if (generation === this.generation) this.store(key, value, now);
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
      });
    this.loading.set(key, loaded);
    return loaded;
  }

  private store(key: string, value: V, readAt: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, readAt });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.policy.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
