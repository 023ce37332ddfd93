import type { Hold } from './admission';
import type { Credential } from './auth/credentials';
import type { GateTicket } from './middleware/user-gate/ticket';
import type { PlanLimits, PlanName } from './plans';
import type { Settings } from './config';
import type { AppError } from './errors';

/** The authenticated caller, set by the API-key middleware or the web session middleware. */
export interface Account {
  userId: number;
  email: string;
  /** Effective plan: a Pro plan past subscription_ends_at is Free. */
  plan: PlanName;
  subscriptionEndsAt: string | null;
  limits: PlanLimits;
  /** What the caller came with: checked again by the user's Durable Object and by the result record's insert. */
  credential: Credential;
}

/** A signed-in browser, set by the session middleware on web routes. */
export interface WebSession {
  /** SHA-256 of the cookie value, the row's key in `sessions`. */
  idHash: string;
  csrfToken: string;
}

/** What the request log line reports beyond status and timing; handlers fill in what they know. */
export interface RequestFacts {
  /** Most bytes the image pipeline held at once. */
  pipelinePeakBytes?: number;
  /** The failure's code, set by the error handler. */
  errorCode?: string;
  /** The answer was a stored result, replayed for a repeated Idempotency-Key. */
  idempotentReplay?: boolean;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    account: Account;
    settings: Settings;
    /** The time as the app sees it; tests drive it (createApp's `clock`). */
    clock: () => Date;
    /** Date.now() when the request came in: how long it may still wait for memory is counted from it (src/admission). */
    arrivedAt: number;
    /** X-Request-Id of this request: the caller's own when well formed, else a new UUID. */
    requestId: string;
    /** Aborts when the client disconnects (the incoming request's signal, kept before any middleware replaces the request). */
    clientSignal: AbortSignal;
    facts: RequestFacts;
    /** The upload's size has been checked (upload-limit middleware), so it is not checked twice. */
    uploadChecked?: boolean;
    /** The upload's bytes counted against the isolate's memory (middleware/upload-admission). */
    uploadHold?: Hold;
    /** Today's conversions as the user's Durable Object counted them for this call (for the X-RateLimit headers). */
    quotaUsed?: number;
    /** The processing call's place at the user's Durable Object: its slot and reserved conversion (middleware/user-gate). */
    ticket?: GateTicket;
    /** The pages' url-encoded form, read once by the web-form middleware. */
    form?: Record<string, string | File>;
    /** Web routes only: null when nobody is signed in. */
    session: WebSession | null;
    /** Web page routes render failures as pages; API routes leave this unset and answer JSON. */
    errorPage?: (error: AppError, status: number, headers: Headers) => Response | Promise<Response>;
  };
}

declare global {
  interface Env {
    /** "far/near" ms: every binding call answers that much later (src/bindings/simulated-latency.ts); never set on a deployment. */
    SIMULATED_RTT_MS?: string;
  }
}
