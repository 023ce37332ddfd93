import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../errors';
import { formatFromName, OUTPUT_FORMAT_NAMES } from '../image/formats';
import { DEFAULT_QUALITY } from '../image/operations';

/*
 * Form fields arrive as text. Each schema's issue message is the "problem" half of the
 * INVALID_PARAMETERS message; the app's validation hook adds the field name (errors.ts).
 */
const requiredOr = (problem: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : problem);

function integerField(min: number, max: number, description: string) {
  const problem = `must be a whole number from ${min} to ${max} (decimal digits only)`;
  return z
    .string({ error: requiredOr(problem) })
    .regex(/^\d{1,9}$/, problem)
    .transform(Number)
    .refine((value) => value >= min && value <= max, problem)
    .openapi({ type: 'integer', minimum: min, maximum: max, description });
}

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, '1': true, yes: true, on: true, false: false, '0': false, no: false, off: false };
const booleanField = (description: string) => {
  const problem = 'must be one of true, false, 1, 0, yes, no, on, off';
  return z
    .string({ error: requiredOr(problem) })
    .refine((value) => Object.hasOwn(BOOLEAN_WORDS, value.toLowerCase()), problem)
    .transform((value) => BOOLEAN_WORDS[value.toLowerCase()])
    .openapi({ type: 'boolean', description });
};

const formatField = (description: string) => {
  const problem = `must be one of ${OUTPUT_FORMAT_NAMES.join(', ')}`;
  return z
    .string({ error: requiredOr(problem) })
    .transform((value) => value.toLowerCase())
    .refine((value) => (OUTPUT_FORMAT_NAMES as readonly string[]).includes(value) || value === 'jpeg', problem)
    .transform((value) => formatFromName(value === 'jpeg' ? 'jpg' : (value as (typeof OUTPUT_FORMAT_NAMES)[number])))
    .openapi({ type: 'string', enum: [...OUTPUT_FORMAT_NAMES], description });
};

const fileField = z
  .custom<File>((value) => value instanceof File, {
    error: requiredOr('must be a file upload (multipart/form-data), given once'),
  })
  .openapi({ type: 'string', format: 'binary', description: 'The image: JPEG, PNG, WebP or AVIF (recognised by its content, not its name).' });

const quality = integerField(1, 100, 'Encoder quality for JPEG, WebP and AVIF; accepted and ignored for PNG. Default 80.')
  .optional()
  .transform((value) => value ?? DEFAULT_QUALITY);
const optionalFormat = formatField('Output format; default: the input format.').optional();

export const ConvertForm = z.object({ file: fileField, format: formatField('Output format.'), quality }).openapi('ConvertForm');

const coordinate = (description: string) => integerField(0, 999_999_999, description);
export const CropForm = z
  .object({
    file: fileField,
    x: coordinate('Left offset in pixels, in the image as displayed (after EXIF orientation).'),
    y: coordinate('Top offset in pixels, in the image as displayed.'),
    width: coordinate('Crop width in pixels; the region must lie inside the image.'),
    height: coordinate('Crop height in pixels; the region must lie inside the image.'),
    format: optionalFormat,
    quality,
  })
  .openapi('CropForm');

export const ResizeForm = z
  .object({
    file: fileField,
    width: integerField(1, 12000, 'Target width in pixels.').optional(),
    height: integerField(1, 12000, 'Target height in pixels.').optional(),
    keep_aspect_ratio: booleanField('With both sides given: true fits inside the box keeping the aspect ratio, false stretches to exactly width x height. Default true.')
      .optional()
      .transform((value) => value ?? true),
    format: optionalFormat,
    quality,
  })
  .refine((form) => form.width !== undefined || form.height !== undefined, {
    path: ['width'],
    message: 'at least one of width and height is required',
  })
  .openapi('ResizeForm');

export const RemoveMetadataForm = z.object({ file: fileField, format: optionalFormat, quality }).openapi('RemoveMetadataForm');

export const ResultSchema = z
  .object({
    uuid: z.string().openapi({ example: '3f2a9c1e5b7d4f60a1b2c3d4e5f60718' }),
    format: z.enum(OUTPUT_FORMAT_NAMES),
    filename: z.string().openapi({ example: 'holiday.webp' }),
    size: z.number().int().openapi({ description: 'Bytes.' }),
    width: z.number().int(),
    height: z.number().int(),
    download_url: z.string().url(),
    expires_at: z.string().openapi({ description: 'ISO-8601 UTC; the link answers 404 afterwards.' }),
  })
  .openapi('Result');

export const AccountSchema = z
  .object({
    user: z.object({
      email: z.string(),
      plan: z.enum(['free', 'pro']),
      is_pro: z.boolean(),
      subscription_ends_at: z.string().nullable().openapi({ description: 'ISO-8601 UTC, or null when no end date applies.' }),
    }),
    quota: z.object({
      is_unlimited: z.boolean(),
      daily_used: z.number().int(),
      daily_remaining: z.number().int().nullable(),
      daily_max: z.number().int().nullable(),
      max_file_size_mb: z.number().int(),
      max_concurrent: z.number().int(),
    }),
    rate_limit: z.object({ requests_per_second: z.number().int() }),
  })
  .openapi('Account');

export const success = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

export const FailureSchema = z
  .object({
    success: z.literal(false),
    error: z.object({ code: z.enum(ERROR_CODES), message: z.string() }),
  })
  .openapi('Failure');
