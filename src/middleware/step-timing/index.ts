import type { MiddlewareHandler } from 'hono';
import { setMetric } from 'hono/timing';
import type { AppEnv } from '../../env';

/**
 * `middleware` as a named step of the Server-Timing header (hono/timing, sent with diagnostic
 * headers only): its own time, before it hands on and after the rest of the request comes back,
 * not the steps after it. Local workerd's clock runs while code runs; a deployed Worker's moves
 * only at I/O, so there only the waits on D1, Durable Objects and R2 show.
 */
export function timedStep(name: string, middleware: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let ownMs = 0;
    let resumedAt = performance.now();
    try {
      return await middleware(c, async () => {
        ownMs += performance.now() - resumedAt;
        try {
          await next();
        } finally {
          resumedAt = performance.now();
        }
      });
    } finally {
      ownMs += performance.now() - resumedAt;
      setMetric(c, name, ownMs);
    }
  };
}
