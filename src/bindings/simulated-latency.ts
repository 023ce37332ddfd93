import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a deployed Worker waits for when its stores are not beside it: a D1 primary and an R2
 * bucket in one region of the world (far), and the user's Durable Object, which lives where it was
 * first called (near). `npm run dev -- --rtt 100/5` and `npm run bench -- --rtt 100/5` set
 * SIMULATED_RTT_MS to make every binding call answer that much later, so a local run shows what a
 * caller far from the stores pays. Unset (every deployment), nothing here runs.
 */
export interface SimulatedRtt {
  farMs: number;
  nearMs: number;
}

export type RoundTripKind = 'far' | 'near';

/** "100/5" -> 100 ms to D1 and R2, 5 ms to the Durable Object; "0/0" counts round trips without delaying them. */
export function parseSimulatedRtt(raw: string | undefined): SimulatedRtt | null {
  const match = raw ? /^\s*(\d{1,5})\s*\/\s*(\d{1,5})\s*$/.exec(raw) : null;
  return match ? { farMs: Number(match[1]), nearMs: Number(match[2]) } : null;
}

/** One binding call: its place in the order of start and end events (not the clock, which a deployed Worker stops while code runs). */
interface Wait {
  kind: RoundTripKind;
  start: number;
  end: number | null;
}

const requestWaits = new AsyncLocalStorage<Wait[]>();
let events = 0;

/** Runs `handle` with its binding calls recorded, for roundTripsWaited(). */
export function recordingRoundTrips<T>(handle: () => T): T {
  return requestWaits.run([], handle);
}

/**
 * The round trips of each kind the current request has waited for in turn so far: calls that have
 * ended, where calls that overlapped count once (a result's R2 upload beside its D1 record is one
 * far round trip). Null outside recordingRoundTrips.
 */
export function roundTripsWaited(): Record<RoundTripKind, number> | null {
  const waits = requestWaits.getStore();
  if (!waits) return null;
  const counts = { far: 0, near: 0 };
  for (const kind of ['far', 'near'] as const) {
    const ended = waits.filter((wait) => wait.kind === kind && wait.end !== null).sort((a, b) => a.start - b.start);
    let reach = -1;
    for (const wait of ended) {
      if (wait.start > reach) counts[kind]++;
      reach = Math.max(reach, wait.end!);
    }
  }
  return counts;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Half the round trip before the call reaches the store and half after it answers, so writes land when they would. */
async function afterRoundTrip<T>(kind: RoundTripKind, ms: number, call: () => Promise<T>): Promise<T> {
  const wait: Wait = { kind, start: ++events, end: null };
  requestWaits.getStore()?.push(wait);
  try {
    if (ms > 0) await sleep(ms / 2);
    const result = await call();
    if (ms > 0) await sleep(ms - ms / 2);
    return result;
  } finally {
    wait.end = ++events;
  }
}

function slowD1(db: D1Database, ms: number): D1Database {
  const inner = new WeakMap<D1PreparedStatement, D1PreparedStatement>();
  const far = <T>(call: () => Promise<T>) => afterRoundTrip('far', ms, call);
  const statement = (real: D1PreparedStatement): D1PreparedStatement => {
    const slow = {
      bind: (...values: unknown[]) => statement(real.bind(...values)),
      first: (column?: string) => far(() => (column === undefined ? real.first() : real.first(column))),
      run: () => far(() => real.run()),
      all: () => far(() => real.all()),
      raw: (options?: { columnNames?: boolean }) => far(() => real.raw(options as { columnNames: true })),
    } as unknown as D1PreparedStatement;
    inner.set(slow, real);
    return slow;
  };
  const unwrap = (statements: D1PreparedStatement[]) => statements.map((s) => inner.get(s) ?? s);
  const session = (real: D1DatabaseSession): D1DatabaseSession => ({
    prepare: (query: string) => statement(real.prepare(query)),
    batch: <T>(statements: D1PreparedStatement[]) => far(() => real.batch<T>(unwrap(statements))),
    getBookmark: () => real.getBookmark(),
  });
  return {
    prepare: (query: string) => statement(db.prepare(query)),
    batch: <T>(statements: D1PreparedStatement[]) => far(() => db.batch<T>(unwrap(statements))),
    exec: (query: string) => far(() => db.exec(query)),
    withSession: (constraint?: D1SessionBookmark | D1SessionConstraint) => session(db.withSession(constraint)),
    dump: () => db.dump(),
  } as D1Database;
}

function slowR2(bucket: R2Bucket, ms: number): R2Bucket {
  const far = <T>(call: () => Promise<T>) => afterRoundTrip('far', ms, call);
  const upload = (real: R2MultipartUpload): R2MultipartUpload => ({
    key: real.key,
    uploadId: real.uploadId,
    uploadPart: (number, value, options) => far(() => real.uploadPart(number, value, options)),
    abort: () => far(() => real.abort()),
    complete: (parts) => far(() => real.complete(parts)),
  });
  return {
    head: (key: string) => far(() => bucket.head(key)),
    get: (key: string, options?: R2GetOptions) => far(() => bucket.get(key, options)),
    put: (key: string, value: Parameters<R2Bucket['put']>[1], options?: R2PutOptions) => far(() => bucket.put(key, value, options)),
    delete: (keys: string | string[]) => far(() => bucket.delete(keys)),
    list: (options?: R2ListOptions) => far(() => bucket.list(options)),
    createMultipartUpload: (key: string, options?: R2MultipartOptions) => far(() => bucket.createMultipartUpload(key, options)).then(upload),
    resumeMultipartUpload: (key: string, uploadId: string) => upload(bucket.resumeMultipartUpload(key, uploadId)),
  } as unknown as R2Bucket;
}

/** Every method called on a Durable Object's stub answers a round trip later; ids pass through. */
function slowNamespace<T extends Rpc.DurableObjectBranded>(namespace: DurableObjectNamespace<T>, ms: number): DurableObjectNamespace<T> {
  const stub = (real: DurableObjectStub<T>) =>
    new Proxy(real, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (typeof property !== 'string' || property === 'then' || property === 'id' || property === 'name' || typeof value !== 'function') return value;
        return (...args: unknown[]) => afterRoundTrip('near', ms, () => (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[property](...args));
      },
    });
  return new Proxy(namespace, {
    get(target, property) {
      if (property === 'get') return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => stub(target.get(id, options));
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

type SlowableBindings = { DB: D1Database; RESULTS: R2Bucket; USER_GATE: DurableObjectNamespace<any> };

/** `env` with D1 and R2 a far round trip away and the user's Durable Object a near one. */
export function withSimulatedLatency<E extends SlowableBindings>(env: E, rtt: SimulatedRtt): E {
  return { ...env, DB: slowD1(env.DB, rtt.farMs), RESULTS: slowR2(env.RESULTS, rtt.farMs), USER_GATE: slowNamespace(env.USER_GATE, rtt.nearMs) };
}

/** D1 as seen from inside the Durable Object, which is itself far from the primary. */
export function slowDatabase(db: D1Database, rtt: SimulatedRtt | null): D1Database {
  return rtt ? slowD1(db, rtt.farMs) : db;
}
