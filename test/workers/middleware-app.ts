import { createExecutionContext, env } from 'cloudflare:test';
import { Hono, type MiddlewareHandler } from 'hono';
import { readSettings } from '../../src/config';
import type { AppEnv } from '../../src/env';
import { handleError } from '../../src/http/error-handler';
import { apiKeyAuth } from '../../src/middleware/api-key-auth';

/** A bare Hono app with API-key auth, the given middleware and `handler`, for middleware tests; `clock` is the app's time. */
export function appWith(middleware: MiddlewareHandler<AppEnv>[], handler: (c: any) => Response | Promise<Response>, clock: () => Date = () => new Date()) {
  const app = new Hono<AppEnv>();
  app.all(
    '/test',
    async (c, next) => {
      c.set('clock', clock);
      c.set('arrivedAt', Date.now());
      c.set('facts', {});
      c.set('clientSignal', c.req.raw.signal);
      c.set('settings', readSettings(c.env));
      await next();
    },
    apiKeyAuth,
    ...middleware,
    handler,
  );
  app.onError(handleError);
  return (key: string, init: RequestInit = {}) =>
    app.request('/test', { ...init, headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${key}` } }, env, createExecutionContext());
}
