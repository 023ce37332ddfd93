import { FailureSchema } from './schemas';

const failure = (description: string) => ({ description, content: { 'application/json': { schema: FailureSchema } } });

/** Failure responses shared by every authenticated endpoint, for the OpenAPI document. */
export const authFailures = {
  401: failure('UNAUTHORIZED: missing, malformed, unknown or revoked API key.'),
  429: failure('RATE_LIMIT_EXCEEDED (per-second rate or concurrent operations) or DAILY_LIMIT_REACHED; carries Retry-After.'),
} as const;

export const processingFailures = {
  ...authFailures,
  422: failure('INVALID_PARAMETERS, UNSUPPORTED_FORMAT or FILE_TOO_LARGE (file size or pixel count).'),
  500: failure('CONVERSION_FAILED.'),
} as const;
