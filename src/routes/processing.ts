import { createRoute, type OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import type { Operation } from '../image/operations';
import { processImage } from '../image/pipeline';
import { apiKeyAuth } from '../middleware/api-key-auth';
import { dailyQuota } from '../middleware/daily-quota';
import { formContentType } from '../middleware/form-content-type';
import { rateLimit } from '../middleware/rate-limit';
import { fileTooLarge, uploadLimit } from '../middleware/upload-limit';
import { MEGABYTE } from '../plans';
import { downloadPath, saveResult } from '../storage/results';
import { processingFailures } from './responses';
import { ConvertForm, CropForm, RemoveMetadataForm, ResizeForm, ResultSchema, success } from './schemas';

function processingRoute<Form extends z.ZodType>(path: string, summary: string, form: Form) {
  return createRoute({
    method: 'post',
    path,
    summary,
    security: [{ ApiKey: [] }],
    // Order matters: who is calling, may they call now, may they spend a conversion, is the body small enough.
    middleware: [apiKeyAuth, rateLimit({ holdsSlot: true }), dailyQuota, uploadLimit, formContentType] as const,
    request: { body: { required: true, content: { 'multipart/form-data': { schema: form } } } },
    responses: {
      200: { description: 'The result, stored and ready to download.', content: { 'application/json': { schema: success(ResultSchema) } } },
      ...processingFailures,
    },
  });
}

/** Validate -> process -> store -> answer; everything else lives in middleware and src/image. */
async function respondWithResult(c: Context<AppEnv>, file: File, operation: Operation) {
  const { userId, limits, plan } = c.get('account');
  const settings = c.get('settings');
  if (file.size > limits.maxFileSizeMb * MEGABYTE) throw fileTooLarge(limits.maxFileSizeMb);

  const image = await processImage(new Uint8Array(await file.arrayBuffer()), operation, settings.pixelLimits[plan]);
  const now = new Date();
  const row = await saveResult(c.env, { userId, operation: operation.kind, image, uploadName: file.name, retentionMs: settings.resultRetentionMs, now });
  const origin = settings.siteUrl ?? new URL(c.req.url).origin;
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
        download_url: origin + downloadPath(row),
        expires_at: row.expires_at,
      },
    },
    200,
  );
}

export function registerProcessing(app: OpenAPIHono<AppEnv>) {
  app.openapi(processingRoute('/api/v1/convert', 'Convert an image to another format', ConvertForm), (c) => {
    const { file, format, quality } = c.req.valid('form');
    return respondWithResult(c, file, { kind: 'convert', format, quality });
  });

  app.openapi(processingRoute('/api/v1/crop', 'Cut a rectangle out of an image', CropForm), (c) => {
    const { file, x, y, width, height, format, quality } = c.req.valid('form');
    return respondWithResult(c, file, { kind: 'crop', region: { x, y, width, height }, format, quality });
  });

  app.openapi(processingRoute('/api/v1/resize', 'Resize an image (Lanczos-3)', ResizeForm), (c) => {
    const { file, width, height, keep_aspect_ratio, format, quality } = c.req.valid('form');
    return respondWithResult(c, file, { kind: 'resize', width, height, keepAspectRatio: keep_aspect_ratio, format, quality });
  });

  app.openapi(processingRoute('/api/v1/remove-metadata', 'Strip EXIF, XMP, ICC and text metadata', RemoveMetadataForm), (c) => {
    const { file, format, quality } = c.req.valid('form');
    return respondWithResult(c, file, { kind: 'remove-metadata', format, quality });
  });
}
