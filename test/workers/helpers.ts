import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import { createApp } from '../../src/app';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/auth/api-keys';
import { utcDay } from '../../src/db/usage';
import { createUser, insertApiKey } from '../../src/db/users';
import type { PlanName } from '../../src/plans';
import { userGateOf } from '../../src/user-gate/stub';

let userCount = 0;

export interface TestUser {
  id: number;
  email: string;
  key: string;
}

/** A new user with one live key; each test gets its own so rate limits never leak between tests. */
export async function createTestUser(options: { plan?: PlanName; subscriptionEndsAt?: string | null; usedToday?: number } = {}): Promise<TestUser> {
  const email = `user${++userCount}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const user = await createUser(env.DB, { email, plan: options.plan ?? 'free', subscriptionEndsAt: options.subscriptionEndsAt ?? null });
  const key = generateApiKey();
  await insertApiKey(env.DB, { userId: user.id, name: 'test', prefix: displayPrefix(key), keyHash: await hashApiKey(key) });
  if (options.usedToday) {
    await env.DB.prepare('INSERT INTO daily_usage (user_id, day, used) VALUES (?1, ?2, ?3)').bind(user.id, utcDay(new Date()), options.usedToday).run();
  }
  return { id: user.id, email, key };
}

/** Today's conversions as the user's Durable Object counts them (the running count: reserved and charged). */
export async function usedToday(userId: number, now = new Date()): Promise<number> {
  return userGateOf(env, userId).usage({ userId, now: now.getTime(), day: utcDay(now), credential: 'test' });
}

/** Today's conversions as D1 has them (the object writes them there behind each answer). */
export async function usedTodayInD1(userId: number, now = new Date()): Promise<number> {
  const row = await env.DB.prepare('SELECT used FROM daily_usage WHERE user_id = ?1 AND day = ?2').bind(userId, utcDay(now)).first<{ used: number }>();
  return row?.used ?? 0;
}

/**
 * Work behind an answer (waitUntil), which SELF.fetch does not wait for: polls `read` until it gives
 * `expected` (compared as JSON) or `withinMs` has passed, and returns what it last gave.
 */
export async function eventually<T>(read: () => Promise<T>, expected: T, withinMs = 5000): Promise<T> {
  const until = Date.now() + withinMs;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

export { corpus, fixture, fixtureList } from '../support/image-testing';

export async function corpusList(folder: string, pattern = /\.(jpe?g|png|webp|avif)$/i): Promise<string[]> {
  const response = await env.CORPUS.fetch(`http://corpus/${folder}?list`);
  const names = (await response.json()) as string[];
  return names.filter((name) => pattern.test(name)).map((name) => `${folder}/${name}`);
}

type Fetcher = (url: string, init?: RequestInit) => Promise<Response>;

/** Calls through `fetcher` (the Worker's own fetch unless a test brings its own app). */
export function apiClient(fetcher: Fetcher = (url, init) => SELF.fetch(url, init)) {
  const api = (path: string, init: RequestInit & { key?: string } = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('Authorization', `Bearer ${init.key}`);
    return fetcher(`http://api.test${path}`, { ...init, headers });
  };
  /** POSTs a multipart form: `file` plus text fields, like curl -F. */
  const upload = (path: string, key: string, file: Uint8Array | null, fields: Record<string, string> = {}, filename = 'upload.bin', init: RequestInit = {}) => {
    const form = new FormData();
    if (file) form.append('file', new File([file], filename));
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return api(path, { ...init, method: 'POST', body: form, key });
  };
  return { api, upload, fetch: fetcher };
}

export const { api, upload } = apiClient();

/** Time that moves only when a test moves it: rate windows and expiry without sleeping. */
export class ManualClock {
  constructor(private ms = Date.now()) {}
  readonly now = () => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * The app on a manual clock, called like `api` and `upload`. Each call also waits for the work
 * the request left running (waitUntil), so what it writes afterwards is there when the call returns.
 */
export function clockedClient(clock: ManualClock) {
  const app = createApp({ clock: clock.now });
  return apiClient(async (url, init) => {
    const ctx = createExecutionContext();
    const response = await app.request(url, init, env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  });
}

export interface Envelope<T = any> {
  success: boolean;
  data: T;
  error: { code: string; message: string; request_id?: string };
}

export async function json<T = any>(response: Response): Promise<Envelope<T>> {
  return (await response.json()) as Envelope<T>;
}

export async function expectFailure(response: Response, status: number, code: string): Promise<Envelope> {
  const body = await json(response);
  if (response.status !== status || body.success !== false || body.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${JSON.stringify(body)}`);
  }
  return body;
}

/** Downloads a result through its link (only the path matters: the host is the test's). */
export async function download(downloadUrl: string, init?: RequestInit): Promise<Response> {
  const url = new URL(downloadUrl);
  return SELF.fetch(`http://api.test${url.pathname}`, init);
}
