import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../env';
import { handleError } from '../../http/error-handler';

/** One line per request, as Workers Logs indexes it (wrangler.toml [observability]). */
export interface RequestLogEntry {
  request_id: string;
  method: string;
  /** The matched route's pattern (never the path itself: a download path holds the link's capability); null when nothing matched. */
  route: string | null;
  status: number;
  duration_ms: number;
  user_id: number | null;
  /** The request's Content-Length; null when it was sent without one (chunked). */
  bytes_in: number | null;
  bytes_out: number | null;
  error_code: string | null;
  pipeline_peak_bytes: number | null;
  idempotent_replay: boolean;
}

export type LogWriter = (entry: RequestLogEntry) => void;

/** Workers Logs takes a JSON line as structured fields; failures go out at error level. */
export const consoleLog: LogWriter = (entry) => (entry.status >= 500 ? console.error : console.log)(JSON.stringify(entry));

function routeOf(c: Context<AppEnv>): string | null {
  // Middleware registered with app.use() matches as ALL; the endpoint's own route is the last other one.
  const endpoint = [...c.req.matchedRoutes].reverse().find((route) => route.method !== 'ALL');
  return endpoint?.path ?? null;
}

function byteCount(header: string | null): number | null {
  return header !== null && /^\d+$/.test(header) ? Number(header) : null;
}

async function bytesOut(response: Response): Promise<number | null> {
  // No body: HEAD and 304 declare the file's length but send none of it.
  if (!response.body) return 0;
  const declared = byteCount(response.headers.get('Content-Length'));
  if (declared !== null) return declared;
  // JSON and HTML answers are built in memory and small; files always declare their length.
  if (/^(application\/json|text\/html)/.test(response.headers.get('Content-Type') ?? '')) return (await response.clone().arrayBuffer()).byteLength;
  return null;
}

/**
 * The outermost middleware after the request id: every answer carries X-Request-Id, and one log
 * line records who asked for what and how it went. A failure that escapes everything (the 404 of
 * an unknown path is thrown outside Hono's per-handler catch) is turned into its envelope here, so
 * it is logged like any other answer.
 */
export function requestLog(write: LogWriter) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    c.set('facts', {});
    try {
      await next();
    } catch (error) {
      c.res = await handleError(error, c);
    }
    const requestId = c.get('requestId');
    if (!c.res.headers.has('X-Request-Id')) {
      // A Response made outside Hono's helpers may have immutable headers: copy it first.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set('X-Request-Id', requestId);
    }
    const facts = c.get('facts');
    write({
      request_id: requestId,
      method: c.req.method,
      route: routeOf(c),
      status: c.res.status,
      duration_ms: Math.round(performance.now() - started),
      user_id: c.get('account')?.userId ?? null,
      bytes_in: byteCount(c.req.header('Content-Length') ?? null),
      bytes_out: await bytesOut(c.res),
      error_code: facts.errorCode ?? null,
      pipeline_peak_bytes: facts.pipelinePeakBytes ?? null,
      idempotent_replay: facts.idempotentReplay ?? false,
    });
  });
}
