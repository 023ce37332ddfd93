import { z } from '@hono/zod-openapi';
import { ERROR_CODES, type ErrorCode } from '../errors';
import { formatByName, OUTPUT_FORMAT_NAMES } from '../image/formats/index';
import { DEFAULT_QUALITY, GRAVITIES, type Colour, type Gravity, type Position, type QualityScore } from '../image/operations';
import { AUTO_QUALITY, QUALITY_TARGET_RANGE, WHOLE_SCORE_MAX_PIXELS } from '../image/quality/calibration';
import type { ImageFormat } from '../image/types';

/*
 * Form fields arrive as text. Each schema's issue message is the "problem" half of the
 * INVALID_PARAMETERS message; the app's validation hook adds the field name (errors.ts).
 * The OpenAPI side documents each field as a client sends it, with the default, range and an
 * example, so that Swagger UI's "Try it out" starts from a call that works.
 */
export const requiredOr = (problem: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : problem);

interface FieldDocs {
  description: string;
  example: number;
  default?: number;
}

function integerField(min: number, max: number, docs: FieldDocs) {
  const problem = `must be a whole number from ${min} to ${max} (decimal digits only)`;
  return z
    .string({ error: requiredOr(problem) })
    .regex(/^\d{1,9}$/, problem)
    .transform(Number)
    .refine((value) => value >= min && value <= max, problem)
    .openapi({ type: 'integer', minimum: min, maximum: max, ...docs });
}

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, '1': true, yes: true, on: true, false: false, '0': false, no: false, off: false };
const booleanField = (description: string, defaultValue: boolean) => {
  const problem = 'must be one of true, false, 1, 0, yes, no, on, off';
  return z
    .string({ error: requiredOr(problem) })
    .refine((value) => Object.hasOwn(BOOLEAN_WORDS, value.toLowerCase()), problem)
    .transform((value) => BOOLEAN_WORDS[value.toLowerCase()])
    .openapi({ type: 'boolean', description, default: defaultValue, example: defaultValue });
};

/** The `format` parameter's names: the output formats, and `best` (the smallest of WebP, AVIF and JPEG at quality=auto). */
const FORMAT_NAMES = [...OUTPUT_FORMAT_NAMES, 'best'] as const;
const FORMAT_PROBLEM = `must be one of ${FORMAT_NAMES.join(', ')}`;
const toFormat = (value: string): ImageFormat | 'best' => (value === 'best' ? 'best' : formatByName(value)!);
const isFormatName = (value: string) => value === 'best' || formatByName(value) !== null;
const BEST_DESCRIPTION =
  'best: WebP, AVIF and JPEG (JPEG only for opaque pictures) are each made as quality=auto makes them (at quality_target, or each at its own default) and the smallest that meets its target is kept; the result\'s format and filename say which.';

const formatField = z
  .string({ error: requiredOr(FORMAT_PROBLEM) })
  .transform((value) => value.toLowerCase())
  .refine(isFormatName, FORMAT_PROBLEM)
  .transform(toFormat)
  .openapi({ type: 'string', enum: [...FORMAT_NAMES], description: `Output format. ${BEST_DESCRIPTION}`, example: 'webp' });

/**
 * Crop, resize and remove-metadata keep the input's format unless one is given; an empty value
 * says the same. Documented with the empty value first, so that Swagger UI's "Try it out" (which
 * fills in an enum's first value) keeps the format rather than re-encoding to WebP.
 */
export const optionalFormat = z
  .string()
  .transform((value) => value.toLowerCase())
  .refine((value) => value === '' || isFormatName(value), `${FORMAT_PROBLEM}, or empty for the input's format`)
  .transform((value) => (value === '' ? undefined : toFormat(value)))
  .optional()
  .openapi({
    type: 'string',
    enum: ['', ...FORMAT_NAMES],
    default: '',
    description: `Output format; left out or empty (the default), the input's format. ${BEST_DESCRIPTION}`,
  });

export const fileField = z
  .custom<File>((value) => value instanceof File, {
    error: requiredOr('must be a file upload (multipart/form-data), given once'),
  })
  .openapi({ type: 'string', format: 'binary', description: 'The image: JPEG, PNG, WebP or AVIF (recognised by its content, not its name).' });

const QUALITY_PROBLEM = 'must be a whole number from 1 to 100 (decimal digits only), or auto';
/**
 * 1-100, or `auto`; left out, 80 (auto with format=best), which the image code decides: a form
 * field has no way to say that a default was sent.
 */
export const quality = z
  .union(
    [
      z
        .string()
        .regex(/^\d{1,9}$/, QUALITY_PROBLEM)
        .transform(Number)
        .refine((value) => value >= 1 && value <= 100, QUALITY_PROBLEM)
        .openapi({ type: 'integer', minimum: 1, maximum: 100 }),
      z
        .string()
        .refine((value) => value.toLowerCase() === 'auto', QUALITY_PROBLEM)
        .transform((): 'auto' => 'auto')
        .openapi({ type: 'string', enum: ['auto'] }),
    ],
    { error: QUALITY_PROBLEM },
  )
  .optional()
  .openapi({
    default: DEFAULT_QUALITY,
    example: DEFAULT_QUALITY,
    description: `Encoder quality for JPEG, WebP and AVIF, 1-100 (default ${DEFAULT_QUALITY}); accepted and ignored for PNG. auto: the lowest quality whose result scores at least quality_target on SSIMULACRA 2 against the pixels that went into the encoder (the result says which quality and score); the default with format=best.`,
  });

const { min: TARGET_MIN, max: TARGET_MAX } = QUALITY_TARGET_RANGE;
const TARGET_PROBLEM = `must be a number from ${TARGET_MIN} to ${TARGET_MAX}`;
/**
 * With quality=auto: the SSIMULACRA 2 score to reach; decimals allowed; empty counts as not given.
 * Its example is the empty value: Swagger UI's "Try it out" would otherwise fill in the minimum
 * and send it beside quality's example, 80, which it may not go with.
 */
export const qualityTarget = z
  .union(
    [
      z
        .string()
        .regex(/^\d{1,3}(\.\d{1,6})?$/, TARGET_PROBLEM)
        .transform(Number)
        .refine((value) => value >= TARGET_MIN && value <= TARGET_MAX, TARGET_PROBLEM)
        .openapi({ type: 'number', minimum: TARGET_MIN, maximum: TARGET_MAX }),
      z
        .literal('')
        .transform(() => undefined)
        .openapi({ type: 'string', enum: [''] }),
    ],
    { error: TARGET_PROBLEM },
  )
  .optional()
  .openapi({
    example: '',
    description: `With quality=auto (or format=best) only: the SSIMULACRA 2 score the result must reach, ${TARGET_MIN} (low quality, obvious artefacts) to ${TARGET_MAX} (visually lossless); 70 is a typical web image. Empty or left out: the score q=80 gives a hard photo in the output format (JPEG ${AUTO_QUALITY.jpeg.target}, WebP ${AUTO_QUALITY.webp.target}, AVIF ${AUTO_QUALITY.avif.target}; format=best gives each candidate its own).`,
  });

interface OutputChoices {
  format?: ImageFormat | 'best';
  quality?: number | 'auto';
  quality_target?: number;
}

/** quality, quality_target and format=best taken together: what they cannot mean together, named by the field to change. */
export function outputProblem({ format, quality, quality_target: target }: OutputChoices): { field: string; message: string } | null {
  if (format === 'best' && typeof quality === 'number') return { field: 'quality', message: 'format=best chooses the quality itself (quality=auto): leave quality out or send auto' };
  if (target !== undefined && quality !== 'auto' && format !== 'best') return { field: 'quality_target', message: 'applies only with quality=auto or format=best' };
  return null;
}

/** Adds outputProblem's issue to a form's refinements. */
export function checkOutput(form: OutputChoices, context: z.RefinementCtx): void {
  const problem = outputProblem(form);
  if (problem) context.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
}

const BACKGROUND_PROBLEM = 'must be a hex colour #rrggbb or #rrggbbaa (for example #ffffff or #00000000)';
export const background = z
  .string()
  .regex(/^#([0-9a-f]{6}|[0-9a-f]{8})$/i, BACKGROUND_PROBLEM)
  .transform((value): Colour => {
    const byte = (at: number) => parseInt(value.slice(at, at + 2), 16);
    return { r: byte(1), g: byte(3), b: byte(5), a: value.length === 9 ? byte(7) : 255 };
  })
  .optional()
  .openapi({
    type: 'string',
    pattern: '^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$',
    default: '#ffffff',
    example: '#ffffff',
    description:
      'What transparent pixels are flattened onto where the output format has no alpha (JPEG; the colour\'s own alpha is then ignored), and the padding of fit=contain (with its alpha where the output format has alpha). Default white.',
  });

export const ConvertForm = z.object({ file: fileField, format: formatField, quality, quality_target: qualityTarget, background }).superRefine(checkOutput).openapi('ConvertForm');

const coordinate = (docs: FieldDocs) => integerField(0, 999_999_999, docs);
export const CropForm = z
  .object({
    file: fileField,
    x: coordinate({ description: 'Left offset in pixels, in the image as displayed (after EXIF orientation).', example: 0 }),
    y: coordinate({ description: 'Top offset in pixels, in the image as displayed.', example: 0 }),
    width: coordinate({ description: 'Crop width in pixels; the region must lie inside the image and not be empty.', example: 100 }),
    height: coordinate({ description: 'Crop height in pixels; the region must lie inside the image and not be empty.', example: 100 }),
    format: optionalFormat,
    quality,
    quality_target: qualityTarget,
    background,
  })
  .superRefine(checkOutput)
  .openapi('CropForm');

export const FITS = ['inside', 'cover', 'contain', 'fill', 'outside'] as const;
const FIT_PROBLEM = `must be one of ${FITS.join(', ')}`;
/** Empty means left out, listed first so that Swagger UI's "Try it out" leaves keep_aspect_ratio in charge (as with format). */
export const fit = z
  .string({ error: FIT_PROBLEM })
  .transform((value) => value.toLowerCase())
  .refine((value) => value === '' || (FITS as readonly string[]).includes(value), `${FIT_PROBLEM}, or empty`)
  .transform((value) => (value === '' ? undefined : (value as (typeof FITS)[number])))
  .optional()
  .openapi({
    type: 'string',
    enum: ['', ...FITS],
    default: '',
    description:
      'How the picture fills the width x height box: inside (fit inside, aspect kept), cover (fill the box, cut the overflow by position), contain (fit inside, pad to the box with background), fill (stretch), outside (cover without cutting). Left out or empty: keep_aspect_ratio decides (true: inside, false: fill). cover and contain need both width and height.',
  });

const POSITION_WORDS = [...GRAVITIES, 'entropy', 'attention'] as const;
const POSITION_PROBLEM = `must be one of ${POSITION_WORDS.join(', ')}, or a focal point x,y in fractions of the picture (for example 0.3,0.6)`;
const FRACTION = String.raw`(0(\.\d+)?|1(\.0+)?)`;
const FOCAL_POINT = new RegExp(`^${FRACTION},${FRACTION}$`);

export function toPosition(value: string): Position | null {
  const word = value.toLowerCase() === 'centre' ? 'center' : value.toLowerCase();
  if ((GRAVITIES as readonly string[]).includes(word)) return { kind: 'gravity', gravity: word as Gravity };
  if (word === 'entropy' || word === 'attention') return { kind: 'smart', strategy: word };
  if (!FOCAL_POINT.test(word)) return null;
  const [x, y] = word.split(',').map(Number);
  return { kind: 'focal', x, y };
}

export const position = z
  .string({ error: POSITION_PROBLEM })
  .transform((value, context) => {
    if (value.trim() === '') return undefined;
    const parsed = toPosition(value.trim());
    if (!parsed) context.addIssue({ code: 'custom', message: POSITION_PROBLEM });
    return parsed ?? z.NEVER;
  })
  .optional()
  .openapi({
    type: 'string',
    // Without a default, Swagger UI's "Try it out" sends its placeholder, the word "string".
    default: '',
    description:
      'Left out or empty: center. Which part cover keeps: center, a side (north, northeast, east, southeast, south, southwest, west, northwest), entropy or attention (libvips smartcrop: the busiest part, or the most interesting spot: skin, saturated colour, edges), or a focal point x,y in fractions of the picture (0,0 top left, 1,1 bottom right), kept as near the middle of the box as the box allows. For contain: where the picture sits in the box (center or a side).',
  });

interface ResizeChoices {
  width?: number;
  height?: number;
  keep_aspect_ratio?: boolean;
  fit?: (typeof FITS)[number];
  position?: Position;
}

/** Combinations the fields cannot mean together, with the field a client should change. */
export function resizeProblem(form: ResizeChoices): { field: string; message: string } | null {
  const { fit, position, keep_aspect_ratio: keep } = form;
  if ((fit === 'cover' || fit === 'contain') && (form.width === undefined || form.height === undefined)) {
    return { field: form.height === undefined ? 'height' : 'width', message: `fit=${fit} needs both width and height` };
  }
  if (keep !== undefined && fit !== undefined && keep !== (fit !== 'fill')) {
    return { field: 'keep_aspect_ratio', message: `keep_aspect_ratio=${keep} contradicts fit=${fit} (${fit === 'fill' ? 'fill stretches' : `${fit} keeps the aspect ratio`}); leave keep_aspect_ratio out` };
  }
  if (position !== undefined && fit !== 'cover' && fit !== 'contain') {
    return { field: 'position', message: `position applies to fit=cover and fit=contain, not to fit=${fit ?? (keep === false ? 'fill' : 'inside')}` };
  }
  if (fit === 'contain' && position && position.kind !== 'gravity') {
    return { field: 'position', message: 'with fit=contain, position places the picture in the box: center or a side (north, southeast, ...); entropy, attention and focal points choose what cover keeps' };
  }
  return null;
}

export const ResizeForm = z
  .object({
    file: fileField,
    width: integerField(1, 12000, { description: 'Target width in pixels. Give width, height or both.', example: 800 }).optional(),
    height: integerField(1, 12000, { description: 'Target height in pixels. Give width, height or both.', example: 600 }).optional(),
    keep_aspect_ratio: booleanField('With both sides given and no fit: true fits inside the box keeping the aspect ratio, false stretches to exactly width x height.', true).optional(),
    fit,
    position,
    background,
    format: optionalFormat,
    quality,
    quality_target: qualityTarget,
  })
  .refine((form) => form.width !== undefined || form.height !== undefined, {
    path: ['width'],
    message: 'at least one of width and height is required',
  })
  .superRefine((form, context) => {
    const problem = resizeProblem(form);
    if (problem) context.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
    checkOutput(form, context);
  })
  .openapi('ResizeForm');

export const RemoveMetadataForm = z.object({ file: fileField, format: optionalFormat, quality, quality_target: qualityTarget, background }).superRefine(checkOutput).openapi('RemoveMetadataForm');

const RESULT_EXAMPLE = {
  uuid: '3f2a9c1e5b7d4f60a1b2c3d4e5f60718',
  format: 'webp',
  filename: 'Canon_40D.webp',
  size: 1908,
  width: 100,
  height: 68,
  download_url: 'https://images.example.com/download/3f2a9c1e5b7d4f60a1b2c3d4e5f60718/webp/Canon_40D.webp',
  expires_at: '2026-11-24T10:00:00.000Z',
  quality: 71,
  score: { metric: 'ssimulacra2', value: 64.93, target: 64.6, measured_on: 'picture' },
} as const;

export const ScoreSchema = z
  .object({
    metric: z.enum(['ssimulacra2']).openapi({ description: 'SSIMULACRA 2.1 (libjxl tools/ssimulacra2): 100 is identical, 90 visually lossless, 70 a typical web image, 50 low quality.' }),
    value: z.number().openapi({ description: 'The score of the result against the pixels that went into the encoder, to two decimals.' }),
    target: z.number().openapi({ description: 'The score it was asked to reach (quality_target, or the default).' }),
    measured_on: z.enum(['picture', 'sample']).openapi({
      description: `picture: the whole result (pictures up to ${WHOLE_SCORE_MAX_PIXELS.toLocaleString('en-US')} pixels); sample: 16 tiles of 128x128 pixels spread evenly across a larger one.`,
    }),
  })
  .openapi('Score', { description: 'What quality=auto measured of the result it kept.' });

/** The Result object's `score` from a run's. */
export function scoreJson(score: QualityScore | undefined): z.infer<typeof ScoreSchema> | null {
  if (!score) return null;
  return { metric: score.metric, value: Math.round(score.value * 100) / 100, target: score.target, measured_on: score.measuredOn };
}

export const ResultSchema = z
  .object({
    uuid: z.string().regex(/^[0-9a-f]{32}$/).openapi({ description: '128 random bits, 32 lowercase hex characters.' }),
    format: z.enum(OUTPUT_FORMAT_NAMES),
    filename: z.string().openapi({ description: "The upload's base name, made safe, with the output format's extension." }),
    size: z.number().int().openapi({ description: 'Size of the produced file in bytes.' }),
    width: z.number().int().openapi({ description: 'Width of the produced image in pixels.' }),
    height: z.number().int().openapi({ description: 'Height of the produced image in pixels.' }),
    download_url: z.string().url().openapi({ description: 'GET or HEAD it, no API key needed: the link itself is the capability.' }),
    expires_at: z.string().openapi({ description: 'ISO-8601 UTC; the link answers 404 afterwards.' }),
    quality: z.number().int().nullable().openapi({ description: 'The encoder quality used (JPEG, WebP, AVIF): the one asked for, or what quality=auto chose; null for PNG and for metadata stripped without re-encoding.' }),
    score: ScoreSchema.nullable().openapi({ description: 'With quality=auto (and format=best): the SSIMULACRA 2 score of the result; null otherwise.' }),
  })
  .openapi('Result', { example: RESULT_EXAMPLE });

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
      daily_used: z.number().int().openapi({ description: 'Successful conversions today (UTC), API and web together.' }),
      daily_remaining: z.number().int().nullable(),
      daily_max: z.number().int().nullable(),
      max_file_size_mb: z.number().int().openapi({ description: 'Largest upload in MB, where 1 MB is 1,048,576 bytes (MiB).' }),
      max_file_size_bytes: z.number().int().openapi({ description: 'The same limit in bytes.' }),
      max_concurrent: z.number().int(),
    }),
    rate_limit: z.object({ requests_per_second: z.number().int() }),
  })
  .openapi('Account', {
    example: {
      user: { email: 'you@example.com', plan: 'free', is_pro: false, subscription_ends_at: null },
      quota: { is_unlimited: false, daily_used: 3, daily_remaining: 12, daily_max: 15, max_file_size_mb: 10, max_file_size_bytes: 10485760, max_concurrent: 2 },
      rate_limit: { requests_per_second: 2 },
    },
  });

export const success = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** The failure envelope; `codes` narrows `error.code` to what one status can carry. */
export const failureSchema = (codes: readonly [ErrorCode, ...ErrorCode[]] = ERROR_CODES) =>
  z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(codes),
      message: z.string().openapi({ description: 'For people: says what was wrong and, where it helps, what to send instead.' }),
      request_id: z.string().openapi({ description: 'The X-Request-Id of this answer; quote it when reporting a problem.' }),
    }),
  });

export const FailureSchema = failureSchema().openapi('Failure');
