import type { PlanLimits, PlanName } from './plans';
import type { Settings } from './config';

/** The authenticated caller, set by the API-key middleware (or the web session later). */
export interface Account {
  userId: number;
  email: string;
  /** Effective plan: a Pro plan past subscription_ends_at is Free. */
  plan: PlanName;
  subscriptionEndsAt: string | null;
  limits: PlanLimits;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    account: Account;
    settings: Settings;
  };
}
