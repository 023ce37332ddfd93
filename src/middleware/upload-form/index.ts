import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';

/**
 * Parses a multipart upload once, by the platform, straight from the request stream, and leaves
 * the form where Hono's validator looks for it (`bodyCache.formData`). The validator's own path
 * reads the whole body into an ArrayBuffer and parses that into a second copy: with the pipeline's
 * copy of the file, a 50 MB upload would be held three times over.
 */
export const uploadForm = createMiddleware(async (c, next) => {
  const contentType = c.req.header('Content-Type') ?? '';
  if (/^\s*multipart\/form-data/i.test(contentType) && !c.req.bodyCache.formData) {
    const parsed = c.req.raw.formData().catch((error: unknown) => {
      throw new HTTPException(400, { message: `Malformed FormData request. ${String(error)}` });
    });
    // (Typed as a FormData; Hono awaits whatever is there, and caches its own parse as a promise too.)
    c.req.bodyCache.formData = parsed as unknown as FormData;
    // Parsed here rather than in the validator, so that the upload's time is this step's (Server-Timing).
    await parsed;
  }
  await next();
});
