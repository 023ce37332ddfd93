import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import type { ErrorCode } from '../errors';
import { ERROR_STATUS } from '../http/error-handler';
import { failureSchema } from './schemas';

/*
 * The OpenAPI side of answers: response headers, and the failure responses of each status with
 * one example per error code. The statuses come from the one table in http/error-handler.ts.
 */

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });

/** Response headers, declared once under components.headers. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': header("This request's id: the caller's own X-Request-Id when it is 1-200 characters of A-Z a-z 0-9 _ - =, else a new UUID. In every answer and in error.request_id."),
  'X-RateLimit-Limit': header('Daily conversions of the plan. Limited plans only, on every processing answer.', 'integer'),
  'X-RateLimit-Remaining': header('Conversions left today after this call.', 'integer'),
  'X-RateLimit-Reset': header('Unix time (seconds) of the next 00:00 UTC, when the daily quota resets.', 'integer'),
  'Retry-After': header('Seconds to wait before trying again.', 'integer'),
  'Idempotent-Replayed': header('"true" when this is the stored answer to an earlier call with the same Idempotency-Key.'),
  'WWW-Authenticate': header('"Bearer": the scheme to authenticate with.'),
  Allow: header('The methods this path takes.'),
  ETag: header("The file's strong validator, for If-None-Match and If-Range."),
  'Last-Modified': header('When the file was stored, for If-Modified-Since and If-Range.'),
  'Cache-Control': header('no-store on /me; "private, max-age=<seconds until the link expires>, immutable" on downloads.'),
  'Content-Disposition': header('attachment; filename="<ASCII name>"; filename*=UTF-8\'\'<UTF-8 name>'),
  'Content-Range': header('bytes <first>-<last>/<size> on 206; bytes */<size> on 416.'),
  'Accept-Ranges': header('"bytes".'),
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;

export const headerRefs = (...names: HeaderName[]) =>
  Object.fromEntries(['X-Request-Id', ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const EXAMPLE_REQUEST_ID = '7f1c2e4a-9b3d-4c5e-8f60-1a2b3c4d5e6f';

/** What each code's message looks like: the same words the service uses. */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  INVALID_PARAMETERS: 'Invalid parameter "quality": must be a whole number from 1 to 100 (decimal digits only), or auto.',
  UNSUPPORTED_FORMAT: 'The file is not a supported image: send a JPEG, PNG, WebP or AVIF file.',
  FILE_TOO_LARGE: 'The file is larger than the 10 MB (10,485,760 bytes) your plan allows.',
  DAILY_LIMIT_REACHED: 'Daily limit reached: the free plan allows 15 conversions per day and 0 remain today. The quota resets at 00:00 UTC.',
  RATE_LIMIT_EXCEEDED: 'Too many requests: the free plan allows 2 requests per second.',
  CONVERSION_FAILED: 'The request could not be processed because of an internal error.',
  UNAUTHORIZED: 'A valid API key is required: send "Authorization: Bearer <API_KEY>".',
  FORBIDDEN: 'This form has expired or did not come from this site. Reload the page and try again.',
  NOT_FOUND: 'This download link is unknown or has expired.',
  METHOD_NOT_ALLOWED: 'GET is not allowed here; use POST.',
  RANGE_NOT_SATISFIABLE: 'The requested range is outside the file (1908 bytes).',
  IDEMPOTENCY_KEY_REUSED:
    'This Idempotency-Key was already used for a different request (another operation, file or parameters). Use a new key for a new request.',
  IDEMPOTENCY_KEY_IN_USE: 'A request with this Idempotency-Key is still being processed. Retry in a moment to get its result.',
  SERVER_BUSY: 'The server is busy with other large images: this one could not start for about 4 seconds. Retry after 4 seconds.',
};

type Codes = readonly [ErrorCode, ...ErrorCode[]];

/** One named schema per status, its code narrowed to what that status carries (FORBIDDEN is the web pages' only). */
const FAILURES_BY_STATUS = {
  401: { name: 'UnauthorizedFailure', codes: ['UNAUTHORIZED'] },
  404: { name: 'NotFoundFailure', codes: ['NOT_FOUND'] },
  405: { name: 'MethodNotAllowedFailure', codes: ['METHOD_NOT_ALLOWED'] },
  409: { name: 'ConflictFailure', codes: ['IDEMPOTENCY_KEY_IN_USE'] },
  416: { name: 'RangeNotSatisfiableFailure', codes: ['RANGE_NOT_SATISFIABLE'] },
  422: { name: 'UnprocessableFailure', codes: ['INVALID_PARAMETERS', 'UNSUPPORTED_FORMAT', 'FILE_TOO_LARGE', 'IDEMPOTENCY_KEY_REUSED'] },
  429: { name: 'TooManyRequestsFailure', codes: ['DAILY_LIMIT_REACHED', 'RATE_LIMIT_EXCEEDED'] },
  500: { name: 'ServerFailure', codes: ['CONVERSION_FAILED'] },
  503: { name: 'BusyFailure', codes: ['SERVER_BUSY'] },
} as const satisfies Record<number, { name: string; codes: Codes }>;

type FailureStatus = keyof typeof FAILURES_BY_STATUS;

const schemas = Object.fromEntries(
  Object.entries(FAILURES_BY_STATUS).map(([status, { name, codes }]) => [status, failureSchema(codes).openapi(name)]),
) as Record<FailureStatus, ReturnType<typeof failureSchema>>;

/** A failure response: its schema, one example per code it can carry here, its headers. */
function failure(status: FailureStatus, description: string, codes: Codes, headers: HeaderName[] = []) {
  for (const code of codes) {
    if (ERROR_STATUS[code] !== status) throw new Error(`${code} is answered with ${ERROR_STATUS[code]}, not ${status}`);
  }
  const examples = Object.fromEntries(
    codes.map((code) => [
      code,
      { summary: code, value: { success: false, error: { code, message: EXAMPLE_MESSAGES[code], request_id: EXAMPLE_REQUEST_ID } } },
    ]),
  );
  return { description, headers: headerRefs(...headers), content: { 'application/json': { schema: schemas[status], examples } } };
}

const QUOTA: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const unauthorized = failure(401, 'UNAUTHORIZED: missing, malformed, unknown or revoked API key.', ['UNAUTHORIZED'], ['WWW-Authenticate']);
const methodNotAllowed = failure(405, 'METHOD_NOT_ALLOWED: this path with any other method (the Allow header lists the right one).', ['METHOD_NOT_ALLOWED'], ['Allow']);
const serverFailure = failure(500, 'CONVERSION_FAILED: the image could not be processed, or another unexpected failure (never a stack trace).', [
  'CONVERSION_FAILED',
]);

export const meFailures = {
  401: unauthorized,
  405: methodNotAllowed,
  429: failure(429, 'RATE_LIMIT_EXCEEDED: over the plan\'s requests per second.', ['RATE_LIMIT_EXCEEDED'], ['Retry-After']),
  500: serverFailure,
} as const;

export const processingFailures = {
  401: unauthorized,
  405: methodNotAllowed,
  409: failure(409, 'IDEMPOTENCY_KEY_IN_USE: a call with the same Idempotency-Key is still running; retry after Retry-After to get its result.', ['IDEMPOTENCY_KEY_IN_USE'], ['Retry-After']),
  422: failure(
    422,
    'INVALID_PARAMETERS (the message names the field), UNSUPPORTED_FORMAT (not JPEG/PNG/WebP/AVIF by its bytes, or damaged), FILE_TOO_LARGE (file size, pixel count or memory), IDEMPOTENCY_KEY_REUSED.',
    ['INVALID_PARAMETERS', 'UNSUPPORTED_FORMAT', 'FILE_TOO_LARGE', 'IDEMPOTENCY_KEY_REUSED'],
    QUOTA,
  ),
  429: failure(
    429,
    'DAILY_LIMIT_REACHED (Retry-After: seconds to 00:00 UTC) or RATE_LIMIT_EXCEEDED (requests per second or concurrent operations).',
    ['DAILY_LIMIT_REACHED', 'RATE_LIMIT_EXCEEDED'],
    ['Retry-After', ...QUOTA],
  ),
  500: serverFailure,
  503: failure(503, 'SERVER_BUSY: the isolate\'s memory is taken by other large images and this request could not start within 2 s of arriving (answered at once when the work before it says so); retry after Retry-After, the seconds it would have waited.', ['SERVER_BUSY'], ['Retry-After']),
} as const;

export const downloadFailures = {
  404: failure(404, 'NOT_FOUND: an unknown, expired or tampered link.', ['NOT_FOUND']),
  405: methodNotAllowed,
  416: failure(416, 'RANGE_NOT_SATISFIABLE: the Range starts past the end of the file.', ['RANGE_NOT_SATISFIABLE'], ['Content-Range']),
  500: serverFailure,
} as const;

export const QUOTA_HEADERS = QUOTA;

export function registerResponseHeaders(app: OpenAPIHono<AppEnv>) {
  for (const [name, definition] of Object.entries(RESPONSE_HEADERS)) app.openAPIRegistry.registerComponent('headers', name, definition);
}
