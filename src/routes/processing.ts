import { createRoute, type OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { endTime, setMetric, startTime } from 'hono/timing';
import type { AppEnv } from '../env';
import type { OperationKind, Transform } from '../image/operations';
import { processImageInto } from '../image/pipeline';
import type { ResultTarget } from '../image/result-sink';
import { admissionFor, MAX_WAIT_MS, type RunCount } from '../admission';
import { cpuShare } from '../admission/cpu-share';
import { every } from 'hono/combine';
import { csrf } from 'hono/csrf';
import { apiKeyAuth } from '../middleware/api-key-auth';
import { csrfToken } from '../middleware/csrf-token';
import { formContentType } from '../middleware/form-content-type';
import { idempotency } from '../middleware/idempotency';
import { loadSession, requireSessionApi } from '../middleware/session';
import { timedStep } from '../middleware/step-timing';
import { uploadAdmission } from '../middleware/upload-admission';
import { uploadForm } from '../middleware/upload-form';
import { fileTooLarge, uploadLimit } from '../middleware/upload-limit';
import { processingGate, quotaHeadersOnAnswer } from '../middleware/user-gate';
import { MEGABYTE } from '../plans';
import { cacheResult } from '../storage/result-cache';
import { downloadPath, type StoredResult } from '../storage/results';
import { saveForWaitingClient } from './delivery';
import { headerRefs, processingFailures, QUOTA_HEADERS } from './responses';
import { ConvertForm, CropForm, RemoveMetadataForm, ResizeForm, ResultSchema, scoreJson, success } from './schemas';
import { TransformForm } from './step-schemas';

/** A call's steps and output, with the name of the operation that made them (the result's record). */
type Operation = Transform & { kind: OperationKind };

/**
 * The same operations are reached through two doors with the same quota, rates and
 * errors: the public API (API key) and the web converter (session cookie + CSRF token).
 */
interface Door {
  prefix: string;
  auth: MiddlewareHandler<AppEnv>[];
  hide: boolean;
  security: { ApiKey: string[] }[];
}
const DOORS: Record<'api' | 'web', Door> = {
  api: { prefix: '/api/v1', auth: [apiKeyAuth], hide: false, security: [{ ApiKey: [] }] },
  // The converter page's calls: hono/csrf checks Origin, csrfToken the session's token.
  web: { prefix: '/app/v1', auth: [csrf(), loadSession, requireSessionApi, csrfToken], hide: true, security: [] },
};

const OPERATIONS = {
  convert: { operationId: 'convertImage', summary: 'Convert an image to another format' },
  crop: { operationId: 'cropImage', summary: 'Cut a rectangle out of an image' },
  resize: { operationId: 'resizeImage', summary: 'Resize an image (Lanczos-3)' },
  'remove-metadata': { operationId: 'removeMetadata', summary: 'Strip EXIF, XMP, ICC and text metadata' },
  transform: { operationId: 'transformImage', summary: 'Crop, resize, rotate, flip, blur, sharpen and grey in one call' },
} as const;

const DESCRIPTION = `Answers 200 with the Result object: the produced file's facts and a download link, valid until \`expires_at\`. One call spends one conversion of the daily quota.

Send an \`Idempotency-Key\` to make retries safe: a repeat of the same request with the same key gets the same result again (no second conversion, no quota).`;

function processingRoute<Form extends z.ZodType>(door: keyof typeof DOORS, operation: keyof typeof OPERATIONS, form: Form) {
  const { prefix, auth, hide, security } = DOORS[door];
  return createRoute({
    method: 'post',
    path: `${prefix}/${operation}`,
    ...OPERATIONS[operation],
    description: DESCRIPTION,
    tags: ['Processing'],
    hide,
    security,
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    // Order matters: who is calling; may they call now and spend a conversion (one call to the user's
    // Durable Object; with an Idempotency-Key the conversion waits for the key's claim); is the body
    // small enough; is there memory to read it.
    middleware: [
      timedStep('auth', every(...auth)),
      quotaHeadersOnAnswer,
      timedStep('gate', processingGate),
      timedStep('idempotency', idempotency),
      uploadLimit,
      formContentType,
      timedStep('admission', uploadAdmission),
      timedStep('form', uploadForm),
    ],
    request: { body: { required: true, content: { 'multipart/form-data': { schema: form } } } },
    responses: {
      200: {
        description: 'The result, stored and ready to download.',
        headers: headerRefs(...QUOTA_HEADERS, 'Idempotent-Replayed'),
        content: { 'application/json': { schema: success(ResultSchema) } },
      },
      ...processingFailures,
    },
  });
}

/** The upload's name and size, and its bytes, which `take` hands over once: the run is then their only holder. */
interface Upload {
  name: string;
  byteLength: number;
  take(): Uint8Array;
}

/**
 * The upload, with every reference to the parsed form dropped (the validated fields and Hono's
 * body cache): the form's copy of the file becomes garbage, which a deployed isolate's memory limit
 * does not count once collected, so the pipeline's copy is the only one a run holds (a 41 MB PNG
 * is not held twice beside its decode), and the run can let go of that one once it is decoded.
 */
async function takeUpload(c: Context<AppEnv>): Promise<Upload> {
  const form = c.req.valid('form' as never) as { file?: File };
  const file = form.file!;
  let bytes: Uint8Array | null = new Uint8Array(await file.arrayBuffer());
  delete form.file;
  c.req.bodyCache = {};
  const byteLength = bytes.byteLength;
  return {
    name: file.name,
    byteLength,
    take() {
      if (!bytes) throw new Error('the upload was handed over already');
      const taken = bytes;
      bytes = null;
      return taken;
    },
  };
}

/** Validate -> process -> store -> answer; everything else lives in middleware and src/image. */
async function respondWithResult(c: Context<AppEnv>, operation: Operation) {
  const { userId, limits, plan, credential } = c.get('account');
  const settings = c.get('settings');
  const size = (c.req.valid('form' as never) as { file: File }).file.size;
  if (size > limits.maxFileSizeMb * MEGABYTE) throw fileTooLarge(limits.maxFileSizeMb);

  const pixelLimits = settings.pixelLimits[plan];
  const memory = admissionFor(() => pixelLimits.memoryBudgetBytes);
  // Counted from Content-Length before the body was read (middleware/upload-admission); once the
  // form is dropped only the pipeline's copy is left, and the run takes that count over.
  const hold = c.get('uploadHold')!;
  startTime(c, 'upload');
  const upload = await takeUpload(c).finally(() => endTime(c, 'upload'));
  hold.shrinkTo(upload.byteLength);
  const now = c.get('clock')();
  let ranUntil = 0;
  let estimatedWorkMs = 0;
  let workedMs = 0;
  // One count of the isolate's memory hands over to the next without a gap another run could take:
  // the run's (released once its result's last part is counted), the last part's while it is stored
  // (kept while a small result is put into this location's cache), then nothing.
  let runCount = null as RunCount | null;
  let releaseStored = () => {};
  const run = (target: ResultTarget) => {
    const share = cpuShare.run();
    return processImageInto(upload.take(), operation, pixelLimits, target, {
      admit: async (peakBytes, estimatedMs) => {
        estimatedWorkMs = estimatedMs;
        const admitted = cpuShare.waitForMemory();
        startTime(c, 'admission', 'waiting for memory beside other runs');
        try {
          const deadline = c.get('arrivedAt') + MAX_WAIT_MS;
          runCount = await memory.admit(peakBytes, { signal: c.get('clientSignal'), deadline, upload: hold, work: { estimatedMs, doneMs: share.workedMs } });
          share.expect(estimatedMs);
          return () => {};
        } finally {
          endTime(c, 'admission');
          admitted();
        }
      },
      share,
      profile: settings.diagnosticHeaders,
    }).finally(() => {
      workedMs = share.workedMs();
      share.end();
      ranUntil = Date.now();
    });
  };
  const countStored = (bytes: number) => {
    releaseStored = runCount?.shrinkTo(bytes) ?? memory.hold(bytes);
    return () => {};
  };
  startTime(c, 'pipeline', 'the run, with the result streamed to R2 as it is encoded');
  const expiresAt = new Date(now.getTime() + settings.resultRetentionMs);
  let saved: StoredResult & { delivered: () => void };
  try {
    saved = await saveForWaitingClient(c, { userId, operation: operation.kind, uploadName: upload.name, credential, now, expiresAt }, run, countStored);
  } catch (error) {
    runCount?.();
    releaseStored();
    throw error;
  } finally {
    endTime(c, 'pipeline');
  }
  const { row, image } = saved;
  for (const [stage, ms] of Object.entries(image.stagesMs ?? {})) setMetric(c, `pipeline.${stage}`, ms);
  // What storing took after the run: the result's last part, completing the upload, the record.
  if (settings.diagnosticHeaders && ranUntil > 0) setMetric(c, 'pipeline.store', Date.now() - ranUntil);
  c.get('facts').pipelinePeakBytes = image.peakBytes;
  const downloadUrl = (settings.siteUrl ?? new URL(c.req.url).origin) + downloadPath(row);
  keepInThisLocation(c, downloadUrl, saved, releaseStored);
  if (settings.diagnosticHeaders) {
    c.header('X-Isolate-Peak-Bytes', String(memory.peakLedgerBytes));
    c.header('X-Isolate-Budget-Bytes', String(pixelLimits.memoryBudgetBytes));
    c.header('X-Pipeline-Peak-Bytes', String(image.peakBytes));
    c.header('X-Pipeline-Work-Ms', `estimated=${Math.round(estimatedWorkMs)}, reported=${Math.round(workedMs)}`);
    c.header('X-Pipeline-Planned-Bytes', String(Math.ceil(image.plannedPeakBytes)));
  }
  saved.delivered();
  return c.json(
    {
      success: true as const,
      data: {
        uuid: row.uuid,
        format: row.format as z.infer<typeof ResultSchema>['format'],
        filename: row.filename,
        size: row.size,
        width: row.width,
        height: row.height,
        download_url: downloadUrl,
        expires_at: row.expires_at,
        quality: image.quality ?? null,
        score: scoreJson(image.score),
      },
    },
    200,
  );
}

/**
 * A small result (stored in one piece) goes into this location's cache behind the answer, so its
 * first download here waits for no far store; `release` gives back the memory its bytes hold.
 */
function keepInThisLocation(c: Context<AppEnv>, downloadUrl: string, saved: StoredResult, release: () => void): void {
  const { bytes, object, row } = saved;
  if (!bytes) return release();
  const facts = {
    contentType: object.httpMetadata?.contentType ?? 'application/octet-stream',
    contentDisposition: object.httpMetadata?.contentDisposition ?? 'attachment',
    etag: object.httpEtag,
    uploaded: object.uploaded,
    size: object.size,
    expiresAt: new Date(row.expires_at),
  };
  c.executionCtx.waitUntil(cacheResult(downloadUrl, bytes, facts, c.get('clock')()).finally(release));
}

export function registerProcessing(app: OpenAPIHono<AppEnv>) {
  for (const door of ['api', 'web'] as const) {
    // Each operation is a list of steps over the one pipeline: convert has none, the others one each.
    app.openapi(processingRoute(door, 'convert', ConvertForm), (c) => {
      const { format, quality, quality_target, background } = c.req.valid('form');
      return respondWithResult(c, { kind: 'convert', steps: [], format, quality, qualityTarget: quality_target, background });
    });

    app.openapi(processingRoute(door, 'crop', CropForm), (c) => {
      const { x, y, width, height, format, quality, quality_target, background } = c.req.valid('form');
      return respondWithResult(c, { kind: 'crop', steps: [{ op: 'crop', x, y, width, height }], fieldNames: 'form', format, quality, qualityTarget: quality_target, background });
    });

    app.openapi(processingRoute(door, 'resize', ResizeForm), (c) => {
      const { width, height, keep_aspect_ratio, fit, position, background, format, quality, quality_target } = c.req.valid('form');
      const steps = [{ op: 'resize' as const, width, height, keepAspectRatio: keep_aspect_ratio, fit, position }];
      return respondWithResult(c, { kind: 'resize', steps, fieldNames: 'form', background, format, quality, qualityTarget: quality_target });
    });

    app.openapi(processingRoute(door, 'remove-metadata', RemoveMetadataForm), (c) => {
      const { format, quality, quality_target, background } = c.req.valid('form');
      return respondWithResult(c, { kind: 'remove-metadata', steps: [{ op: 'remove-metadata' }], format, quality, qualityTarget: quality_target, background });
    });

    app.openapi(processingRoute(door, 'transform', TransformForm), (c) => {
      const { steps, format, quality, quality_target, background } = c.req.valid('form');
      return respondWithResult(c, { kind: 'transform', steps, format, quality, qualityTarget: quality_target, background });
    });
  }
}
