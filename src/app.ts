import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import { timing } from 'hono/timing';
import { TrieRouter } from 'hono/router/trie-router';
import { readSettings } from './config';
import type { AppEnv } from './env';
import { AppError, invalidParameter } from './errors';
import { handleError } from './http/error-handler';
import { consoleLog, requestLog, type LogWriter } from './middleware/request-log';
import { registerDownload } from './routes/download';
import { registerMe } from './routes/me';
import { registerProcessing } from './routes/processing';
import { registerOpenApiDocument } from './routes/openapi';
import { registerWeb } from './web';
import { cpuShare } from './admission/cpu-share';
import { roundTripsWaited } from './bindings/simulated-latency';

export interface AppOptions {
  /** The app's time (quota days, rate windows, expiry); tests pass a clock they move by hand. */
  clock?: () => Date;
  /** Where the per-request log line goes; Workers Logs (console) by default. */
  log?: LogWriter;
}

// A caller's own request id is kept when it is short and plain; anything else gets a fresh UUID.
const REQUEST_ID_LIMIT = 200;

export function createApp(options: AppOptions = {}) {
  const clock = options.clock ?? (() => new Date());
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        throw invalidParameter(fieldName(issue.path), issue.message);
      }
    },
  });

  app.use('*', requestId({ limitLength: REQUEST_ID_LIMIT }), requestLog(options.log ?? consoleLog), roundTripsHeader, async (c, next) => {
    c.set('settings', readSettings(c.env));
    c.set('clock', clock);
    c.set('arrivedAt', Date.now());
    c.set('clientSignal', c.req.raw.signal);
    // Long pipeline runs give way to the requests in flight beside them (src/admission/cpu-share.ts).
    const left = cpuShare.enter();
    try {
      await next();
    } finally {
      left();
    }
  });
  // Where a request's time goes (middleware/step-timing), for `npm run bench`.
  app.use('*', timing({ enabled: (c) => c.get('settings').diagnosticHeaders }));

  app.get('/api/v1', (c) =>
    c.json({ name: 'Edge image API', openapi: '/api/v1/openapi.json', docs: '/docs', endpoints: ['/api/v1/me', '/api/v1/convert', '/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/transform'] }),
  );
  registerWeb(app);
  registerMe(app);
  registerProcessing(app);
  registerDownload(app);

  registerOpenApiDocument(app);

  const allowed = allowedMethodsOf(app);
  app.notFound((c) => {
    const methods = allowed(c.req.path);
    if (methods.length > 0) {
      throw new AppError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed here; use ${methods.join(' or ')}.`, undefined, {
        Allow: methods.join(', '),
      });
    }
    throw new AppError('NOT_FOUND', `No endpoint at ${c.req.path}.`);
  });
  app.onError(handleError);
  return app;
}

/**
 * Under a simulated latency (`npm run dev -- --rtt far/near`), how many far (D1, R2) and near (the
 * user's Durable Object) round trips the request waited for in turn, for `npm run bench -- --rtt`.
 */
const roundTripsHeader: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const waited = roundTripsWaited();
  if (!waited) return;
  // A Response made outside Hono's helpers may have immutable headers: copy it first.
  c.res = new Response(c.res.body, c.res);
  c.res.headers.set('X-Round-Trips', `far=${waited.far}, near=${waited.near}`);
};

/** The methods registered for a path, for 405 answers and their Allow header. */
function allowedMethodsOf(app: OpenAPIHono<AppEnv>): (path: string) => string[] {
  const router = new TrieRouter<string>();
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.method === 'ALL') continue;
    router.add(route.method, route.path, route.method);
    methods.add(route.method);
  }
  return (path) => {
    const found = [...methods].filter((method) => router.match(method, path)[0].length > 0);
    if (found.includes('GET')) found.push('HEAD');
    return [...new Set(found)];
  };
}

/** A field as a client names it: `quality`, or within the JSON of `steps`, `steps[2].sigma`. */
function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'request';
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join('');
}
