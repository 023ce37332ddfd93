import { findSession, type SessionRow } from '../db/sessions';
import { findUserByKeyHash, type ApiKeyOwner, type D1Reader } from '../db/users';
import { IsolateCache, type CachePolicy } from '../isolate-cache';

/**
 * API keys and web sessions, as every call needs them, cached in the isolate (decisions.md,
 * "What each cache may show late"): what was found is served for a minute after it was read (and
 * read again in the background after 30 s), what was not found for 10 s. A miss reads a D1 read
 * replica (the Sessions API); an answer of "unknown" is asked of the primary before it is believed,
 * so a key or session made a moment ago elsewhere is never refused. Revocations and log-outs reach
 * processing calls at once through the user's Durable Object and the result record's own check
 * (src/storage/results.ts); this cache only bounds how long /me and the pages may lag.
 */
export const FOUND_FRESH_MS = 60_000;
export const UNKNOWN_FRESH_MS = 10_000;
const REFRESH_AFTER_MS = 30_000;
const MAX_ENTRIES = 10_000;

function policy<V>(): CachePolicy<V | null> {
  return {
    freshMs: (value) => (value === null ? UNKNOWN_FRESH_MS : FOUND_FRESH_MS),
    refreshAfterMs: (value) => (value === null ? Infinity : REFRESH_AFTER_MS),
    maxEntries: MAX_ENTRIES,
  };
}

const keyOwners = new IsolateCache<ApiKeyOwner | null>(policy());
const sessions = new IsolateCache<SessionRow | null>(policy());

/** Replica first; a miss there is confirmed by the primary. */
async function readReplicaThenPrimary<V>(db: D1Database, read: (reader: D1Reader) => Promise<V | null>): Promise<V | null> {
  return (await read(db.withSession('first-unconstrained'))) ?? read(db);
}

export type Background = (work: Promise<unknown>) => void;

/** The owner of a live key by the key's hash, or null. */
export function cachedKeyOwner(db: D1Database, keyHash: string, now: Date, background: Background): Promise<ApiKeyOwner | null> {
  return keyOwners.get(keyHash, now.getTime(), () => readReplicaThenPrimary(db, (reader) => findUserByKeyHash(reader, keyHash)), background);
}

/** A live session by its id hash, or null (an expired one is null by the app's clock). */
export async function cachedSession(db: D1Database, idHash: string, now: Date, background: Background): Promise<SessionRow | null> {
  const row = await sessions.get(idHash, now.getTime(), () => readReplicaThenPrimary(db, (reader) => findSession(reader, idHash)), background);
  return row && Date.parse(row.expires_at) > now.getTime() ? row : null;
}

/** This isolate forgets a key at once when it revokes it (other isolates within FOUND_FRESH_MS). */
export function forgetKey(keyId: number): void {
  keyOwners.forget((owner) => owner?.key_id === keyId);
}

export function forgetSession(idHash: string): void {
  sessions.forget((_row, key) => key === idHash);
}

