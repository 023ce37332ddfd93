import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../env';
import { AppError, ClientClosedRequest, type ErrorCode } from '../errors';

/** The one table from error code to HTTP status. */
export const ERROR_STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_PARAMETERS: 422,
  UNSUPPORTED_FORMAT: 422,
  FILE_TOO_LARGE: 422,
  DAILY_LIMIT_REACHED: 429,
  RATE_LIMIT_EXCEEDED: 429,
  CONVERSION_FAILED: 500,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RANGE_NOT_SATISFIABLE: 416,
  // The IETF draft on the Idempotency-Key header: another request under the same key is 422, one still running is 409.
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  // The isolate's memory is taken by other large images (src/admission): come back after Retry-After.
  SERVER_BUSY: 503,
};

export function failureBody(code: ErrorCode, message: string, requestId: string | undefined) {
  return { success: false as const, error: { code, message, ...(requestId ? { request_id: requestId } : {}) } };
}

/** Hono's own exceptions (malformed multipart, wrong content type) become our codes. */
function fromHttpException(error: HTTPException): AppError {
  // hono/csrf: a form post from another site, or one whose origin cannot be told.
  if (error.status === 403) {
    return new AppError('FORBIDDEN', 'This form was not sent from this site. Reload the page and try again.', error.message);
  }
  if (error.status === 400 || error.status === 415) {
    return new AppError('INVALID_PARAMETERS', 'The request body must be multipart/form-data with a "file" field.', error.message);
  }
  return new AppError('CONVERSION_FAILED', 'The request could not be processed.', error.message);
}

function errorStack(detail: unknown): string | null {
  return detail instanceof Error && detail.stack ? detail.stack : null;
}

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof HTTPException) return fromHttpException(error);
  return new AppError('CONVERSION_FAILED', 'The request could not be processed because of an internal error.', error);
}

/**
 * `app.onError`: every failure leaves as the JSON envelope, never a stack trace; web pages
 * (which set `errorPage`) show the same code and message as an HTML page instead.
 */
export function handleError(error: unknown, c: Context<AppEnv>): Response | Promise<Response> {
  // A body read that fails because the client hung up is not the service failing.
  if (error instanceof ClientClosedRequest || c.get('clientSignal')?.aborted) {
    const facts = c.get('facts');
    if (facts) facts.errorCode = 'CLIENT_CLOSED_REQUEST';
    // nginx's "client closed request": nobody reads it, the request log does.
    return new Response(null, { status: 499 });
  }
  const appError = toAppError(error);
  const status = ERROR_STATUS[appError.code];
  const requestId = c.get('requestId');
  const facts = c.get('facts');
  if (facts) facts.errorCode = appError.code;
  // The request log line has the outcome; this line has what only the server may see.
  // A busy isolate is not a fault: its 503 carries nothing for the server's own line.
  if (status >= 500 && appError.code !== 'SERVER_BUSY') console.error(JSON.stringify({ request_id: requestId ?? null, error: String(appError.detail ?? appError), stack: errorStack(appError.detail) }));
  const headers = new Headers(appError.headers);
  if (appError.code === 'UNAUTHORIZED') headers.set('WWW-Authenticate', 'Bearer');
  headers.set('Cache-Control', 'no-store');
  const renderPage = c.get('errorPage');
  if (renderPage) return renderPage(appError, status, headers);
  return c.json(failureBody(appError.code, appError.message, requestId), status, Object.fromEntries(headers));
}
