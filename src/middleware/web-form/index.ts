import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

// The largest form a page sends is a few hundred bytes; anything near this is not ours.
export const FORM_BODY_LIMIT = 16 * 1024;

const notOurForm = (detail?: unknown) =>
  new AppError('INVALID_PARAMETERS', 'The form could not be read. Reload the page and send it again.', detail);

/**
 * The pages' own forms: url-encoded, small, read once before anything else looks at them
 * (the CSRF check, then the handler, both use `form`). Uploads go to /app/v1 instead.
 */
export const webForm = createMiddleware<AppEnv>(async (c, next) => {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(c.req.header('Content-Type') ?? '')) throw notOurForm('not url-encoded');
  const limit = bodyLimit({
    maxSize: FORM_BODY_LIMIT,
    onError: () => {
      throw notOurForm('form over the size limit');
    },
  });
  return limit(c, async () => {
    let form: Record<string, string | File>;
    try {
      form = (await c.req.parseBody()) as Record<string, string | File>;
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw notOurForm(error);
    }
    c.set('form', form);
    await next();
  });
});
