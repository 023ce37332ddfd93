import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';
import { groupedDigits, MEGABYTE } from '../../plans';

// Room for the multipart boundaries and the small text fields around the file.
export const FORM_OVERHEAD_BYTES = 64 * 1024;

export function fileTooLarge(maxFileSizeMb: number): AppError {
  return new AppError('FILE_TOO_LARGE', `The file is larger than the ${maxFileSizeMb} MB (${groupedDigits(maxFileSizeMb * MEGABYTE)} bytes) your plan allows.`);
}

/**
 * Refuses an oversized upload before reading it: from Content-Length when present,
 * otherwise by counting while the body streams in. The file itself is checked again
 * exactly once the form is parsed.
 */
export const uploadLimit = createMiddleware<AppEnv>(async (c, next) => {
  // A call with an Idempotency-Key has its body checked (and read) earlier, once.
  if (c.get('uploadChecked')) return next();
  c.set('uploadChecked', true);
  const { maxFileSizeMb } = c.get('account').limits;
  const limiter = bodyLimit({
    maxSize: maxFileSizeMb * MEGABYTE + FORM_OVERHEAD_BYTES,
    onError: () => {
      throw fileTooLarge(maxFileSizeMb);
    },
  });
  return limiter(c, next);
});
