import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import { cpuShare } from '../../admission/cpu-share';

/**
 * The platform's parse of the multipart body, straight from the request stream, left where Hono's
 * validator looks for it (`bodyCache.formData`); malformed bodies fail as the validator words it.
 */
export function parseUploadForm(c: Context): Promise<FormData> {
  const cached = c.req.bodyCache.formData as unknown as Promise<FormData> | undefined;
  if (cached) return Promise.resolve(cached);
  const reading = cpuShare.readingBody();
  const parsed = c.req.raw
    .formData()
    .catch((error: unknown) => {
      throw new HTTPException(400, { message: `Malformed FormData request. ${String(error)}` });
    })
    .finally(reading);
  // Awaited by the validator; a call refused before it must not leave an unhandled rejection.
  parsed.catch(() => {});
  // (Typed as a FormData; Hono awaits whatever is there, and caches its own parse as a promise too.)
  c.req.bodyCache.formData = parsed as unknown as FormData;
  return parsed;
}

/**
 * Parses a multipart upload once, by the platform, straight from the request stream (see
 * parseUploadForm). The validator's own path reads the whole body into an ArrayBuffer and parses
 * that into a second copy: with the pipeline's copy of the file, a 50 MB upload would be held
 * three times over.
 */
export const uploadForm = createMiddleware(async (c, next) => {
  const contentType = c.req.header('Content-Type') ?? '';
  // Parsed here rather than in the validator, so that the upload's time is this step's (Server-Timing).
  if (/^\s*multipart\/form-data/i.test(contentType)) await parseUploadForm(c);
  await next();
});
