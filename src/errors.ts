/**
 * The one error type of the service. `code` is from a closed set (statuses live in
 * src/http/error-handler.ts); `message` is safe to show to clients, `detail` is for logs only.
 */
export const ERROR_CODES = [
  'INVALID_PARAMETERS',
  'UNSUPPORTED_FORMAT',
  'FILE_TOO_LARGE',
  'DAILY_LIMIT_REACHED',
  'RATE_LIMIT_EXCEEDED',
  'CONVERSION_FAILED',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'RANGE_NOT_SATISFIABLE',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_USE',
  'SERVER_BUSY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: unknown,
    /** Extra response headers the failure needs (Retry-After, Allow, rate-limit headers). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** The one place that words "invalid parameter" messages, so every field reads alike. */
export function invalidParameter(field: string, problem: string): AppError {
  return new AppError('INVALID_PARAMETERS', `Invalid parameter "${field}": ${problem}.`);
}

/** The client disconnected before its answer was ready: not a failure of the service, and nobody reads the answer. */
export class ClientClosedRequest extends Error {
  constructor() {
    super('The client closed the connection before the answer was ready.');
    this.name = 'ClientClosedRequest';
  }
}
