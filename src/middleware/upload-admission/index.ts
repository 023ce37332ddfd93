import { createMiddleware } from 'hono/factory';
import { admissionFor, MAX_WAIT_MS } from '../../admission';
import { cpuShare } from '../../admission/cpu-share';
import type { AppEnv } from '../../env';
import { MEGABYTE } from '../../plans';
import { FORM_OVERHEAD_BYTES } from '../upload-limit';

/**
 * Counts an upload against the isolate's memory (src/admission) before a byte of its body is
 * read: twice its Content-Length (the parsed form's file, and the pipeline's copy taken before
 * the form is dropped), or, for a body without Content-Length (chunked), twice the largest the
 * plan accepts (decisions.md). It waits while that does not fit beside what runs, and answers 503
 * SERVER_BUSY with Retry-After if it has waited too long. The hold lasts until the request ends
 * or its run takes it over (routes/processing.ts).
 */
/**
 * What a run needs at least, per byte of its upload, for judging before the body is read whether
 * it could start in time: a PNG photo's run takes about 4 times its file (a 16.8 MB 3000 px PNG to
 * WebP plans 63 MB), a JPEG's 10-17 times (its body, a small one, is read quickly anyway).
 */
const RUN_BYTES_PER_BODY_BYTE = 4;
/**
 * What reading a body takes on a busy isolate, per MB: an upload let in later than this before its
 * deadline would be read, planned and refused after it (a 16.8 MB PNG read beside long runs under
 * the bench's load took most of a second; idle, 28 MB take 80-120 ms through wrangler dev).
 */
const READ_MS_PER_MB = 40;

/** When an upload must have been let in for its run to be judged by the request's deadline. */
function uploadDeadline(arrivedAt: number, bodyBytes: number): number {
  return arrivedAt + MAX_WAIT_MS - (bodyBytes / MEGABYTE) * READ_MS_PER_MB;
}

export const uploadAdmission = createMiddleware<AppEnv>(async (c, next) => {
  if (c.get('uploadHold')) return next();
  const { limits, plan } = c.get('account');
  const largest = limits.maxFileSizeMb * MEGABYTE + FORM_OVERHEAD_BYTES;
  const declared = c.req.header('Content-Length');
  const bodyBytes = declared !== undefined && /^\d+$/.test(declared) ? Math.min(Number(declared), largest) : largest;
  const budget = c.get('settings').pixelLimits[plan].memoryBudgetBytes;
  const waiting = cpuShare.waitForMemory();
  const hold = await admissionFor(() => budget)
    .reserve(2 * bodyBytes, { signal: c.get('clientSignal'), deadline: uploadDeadline(c.get('arrivedAt'), bodyBytes), runBytes: RUN_BYTES_PER_BODY_BYTE * bodyBytes })
    .finally(waiting);
  c.set('uploadHold', hold);
  try {
    await next();
  } finally {
    hold.release();
  }
});
