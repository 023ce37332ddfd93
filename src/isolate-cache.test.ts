import { describe, expect, it } from 'vitest';
import { IsolateCache } from './isolate-cache';

/** A store whose reads are counted and whose value the test changes. */
function store(initial: string | null) {
  let value = initial;
  let reads = 0;
  return {
    load: async () => {
      reads++;
      return value;
    },
    set: (next: string | null) => (value = next),
    reads: () => reads,
  };
}

const policy = { freshMs: (v: string | null) => (v === null ? 10 : 60), refreshAfterMs: (v: string | null) => (v === null ? Infinity : 30), maxEntries: 3 };

describe('IsolateCache', () => {
  it('serves what it read while fresh, reloads in the background past refreshAfter, and never serves it past freshMs', async () => {
    const cache = new IsolateCache<string | null>(policy);
    const source = store('a');
    const background: Promise<unknown>[] = [];
    const get = (now: number) => cache.get('k', now, source.load, (work) => background.push(work));
    expect(await get(0)).toBe('a');
    source.set('b');
    expect(await get(29)).toBe('a');
    expect(source.reads()).toBe(1);
    expect(await get(30)).toBe('a'); // served at once; a reload starts behind it
    await Promise.all(background);
    expect(source.reads()).toBe(2);
    expect(await get(31)).toBe('b');
    source.set('c');
    expect(await get(30 + 59)).toBe('b');
    expect(await get(30 + 60)).toBe('c'); // past freshMs: read again before answering
  });

  it('keeps "not found" for a shorter time', async () => {
    const cache = new IsolateCache<string | null>(policy);
    const source = store(null);
    expect(await cache.get('k', 0, source.load, () => {})).toBeNull();
    source.set('created');
    expect(await cache.get('k', 9, source.load, () => {})).toBeNull();
    expect(await cache.get('k', 10, source.load, () => {})).toBe('created');
  });

  it('makes one read for concurrent misses of a key', async () => {
    const cache = new IsolateCache<string | null>(policy);
    const source = store('a');
    const values = await Promise.all(Array.from({ length: 20 }, () => cache.get('k', 0, source.load, () => {})));
    expect(values).toEqual(Array(20).fill('a'));
    expect(source.reads()).toBe(1);
  });

  it('forgets at once, and a read that began before the forget brings nothing back', async () => {
    const cache = new IsolateCache<string | null>(policy);
    let finish!: (value: string) => void;
    const slow = () => new Promise<string>((resolve) => (finish = resolve));
    const pending = cache.get('k', 0, slow, () => {});
    cache.forget((_value, key) => key === 'k');
    finish('stale');
    expect(await pending).toBe('stale'); // the caller that asked before the forget
    const source = store('fresh');
    expect(await cache.get('k', 1, source.load, () => {})).toBe('fresh');
    expect(source.reads()).toBe(1);
  });

  it('keeps at most maxEntries, the least recently read going first', async () => {
    const cache = new IsolateCache<string | null>(policy);
    for (const key of ['a', 'b', 'c']) await cache.get(key, 0, async () => key, () => {});
    await cache.get('a', 1, async () => 'reloaded', () => {}); // a is now the most recent
    await cache.get('d', 1, async () => 'd', () => {});
    expect(cache.size).toBe(3);
    const source = store('b again');
    expect(await cache.get('b', 2, source.load, () => {})).toBe('b again'); // b was dropped
    expect(await cache.get('a', 2, async () => 'not read', () => {})).toBe('a');
  });
});
