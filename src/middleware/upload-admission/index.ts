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

export const uploadAdmission = createMiddleware<AppEnv>(async (c, next) => {
  if (c.get('uploadHold')) return next();
  const { limits, plan } = c.get('account');
  const largest = limits.maxFileSizeMb * MEGABYTE + FORM_OVERHEAD_BYTES;
  const declared = c.req.header('Content-Length');
  const bodyBytes = declared !== undefined && /^\d+$/.test(declared) ? Math.min(Number(declared), largest) : largest;
  const budget = c.get('settings').pixelLimits[plan].memoryBudgetBytes;
  const waiting = cpuShare.waitForMemory();
  const hold = await admissionFor(() => budget)
    .reserve(2 * bodyBytes, { signal: c.get('clientSignal'), deadline: c.get('arrivedAt') + MAX_WAIT_MS, runBytes: RUN_BYTES_PER_BODY_BYTE * bodyBytes })
    .finally(waiting);
  c.set('uploadHold', hold);
  try {
    await next();
  } finally {
    hold.release();
  }
});
