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
}

/** A signed-in browser, set by the session middleware on web routes. */
export interface WebSession {
  /** SHA-256 of the cookie value, the row's key in `sessions`. */
  idHash: string;
  csrfToken: string;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    account: Account;
    settings: Settings;
    /** The pages' url-encoded form, read once by the web-form middleware. */
    form?: Record<string, string | File>;
    /** Web routes only: null when nobody is signed in. */
    session: WebSession | null;
    /** Web page routes render failures as pages; API routes leave this unset and answer JSON. */
    errorPage?: (error: AppError, status: number, headers: Headers) => Response | Promise<Response>;
  };
}
