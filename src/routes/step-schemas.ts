import { z } from '@hono/zod-openapi';
import { BLUR_SIGMA, MAX_STEPS, SHARPEN_SIGMA, STEP_OPS, type Step, type StepOp } from '../image/operations';
import { background, checkOutput, fileField, fit, optionalFormat, position, quality, qualityTarget, requiredOr, resizeProblem } from './schemas';

/*
 * POST /transform's `steps`: a multipart field is text, so it is a JSON array, parsed and then
 * checked step by step against the schema of each step's `op`. A problem is named by the step's
 * index and field (`steps[2].sigma`), which the app's validation hook turns into the
 * INVALID_PARAMETERS message. The same schemas are the OpenAPI document's components (Step and one
 * per op), which the `steps` field's description and contentSchema point to.
 */

function wholeNumber(min: number, max: number, description: string, example: number) {
  const problem = `must be a whole number from ${min} to ${max}`;
  return z
    .number({ error: requiredOr(problem) })
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, problem)
    .openapi({ type: 'integer', minimum: min, maximum: max, description, example });
}

function sigma({ min, max }: { min: number; max: number }, description: string, example: number) {
  const problem = `must be a number from ${min} to ${max}`;
  return z
    .number({ error: requiredOr(problem) })
    .refine((value) => value >= min && value <= max, problem)
    .openapi({ type: 'number', minimum: min, maximum: max, description, example });
}

const opField = <Op extends StepOp>(op: Op) => z.literal(op).openapi({ type: 'string', enum: [op] });
const coordinate = (description: string, example: number) => wholeNumber(0, 999_999_999, description, example);
const side = (description: string, example: number) => wholeNumber(1, 12000, description, example).optional();

const CropStep = z
  .object({
    op: opField('crop'),
    x: coordinate('Left offset in pixels of the picture as it stands at this step.', 0),
    y: coordinate('Top offset in pixels of the picture as it stands at this step.', 0),
    width: coordinate('Width in pixels; the region must lie inside the picture and not be empty.', 100),
    height: coordinate('Height in pixels; the region must lie inside the picture and not be empty.', 100),
  })
  .strict()
  .openapi('CropStep', { description: 'Cut a rectangle out of the picture as it stands at this step (after EXIF orientation and the steps before it).' });

const ResizeStep = z
  .object({
    op: opField('resize'),
    width: side('Target width in pixels. Give width, height or both.', 800),
    height: side('Target height in pixels. Give width, height or both.', 600),
    keep_aspect_ratio: z
      .boolean({ error: 'must be true or false (JSON booleans, without quotes)' })
      .optional()
      .openapi({ description: 'With both sides and no fit: true fits inside the box keeping the aspect ratio, false stretches.', default: true }),
    fit,
    position,
  })
  .strict()
  .superRefine((step, context) => {
    if (step.width === undefined && step.height === undefined) context.addIssue({ code: 'custom', path: ['width'], message: 'at least one of width and height is required' });
    const problem = resizeProblem(step);
    if (problem) context.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
  })
  .openapi('ResizeStep', { description: 'Resize as POST /resize does (Lanczos-3; fit and position as sharp places them), the side that follows the aspect ratio exact to the nearest pixel.' });

const RotateStep = z
  .object({
    op: opField('rotate'),
    angle: z
      .union([z.literal(90), z.literal(180), z.literal(270)], { error: requiredOr('must be 90, 180 or 270') })
      .openapi({ type: 'integer', enum: [90, 180, 270], description: 'Degrees clockwise.', example: 90 }),
  })
  .strict()
  .openapi('RotateStep', { description: 'Turn the picture clockwise by a right angle.' });

const FlipStep = z
  .object({
    op: opField('flip'),
    axis: z
      .enum(['horizontal', 'vertical'], { error: requiredOr('must be horizontal or vertical') })
      .openapi({ description: 'horizontal mirrors left and right (sharp\'s flop), vertical turns upside down (sharp\'s flip).', example: 'horizontal' }),
  })
  .strict()
  .openapi('FlipStep', { description: 'Mirror the picture.' });

const BlurStep = z
  .object({ op: opField('blur'), sigma: sigma(BLUR_SIGMA, 'Standard deviation of the Gaussian in pixels, as sharp\'s blur(sigma).', 2) })
  .strict()
  .openapi('BlurStep', { description: 'Gaussian blur, as sharp\'s blur(sigma).' });

const SharpenStep = z
  .object({ op: opField('sharpen'), sigma: sigma(SHARPEN_SIGMA, 'Standard deviation in pixels of the Gaussian the unsharp mask compares with, as sharp\'s sharpen({ sigma }).', 1) })
  .strict()
  .openapi('SharpenStep', { description: "Unsharp mask on the lightness (L* of CIELAB), as sharp's sharpen({ sigma }) with its other defaults: colours keep their hue and chroma." });

const GrayscaleStep = z
  .object({ op: opField('grayscale') })
  .strict()
  .openapi('GrayscaleStep', { description: "The luminance of each pixel, as sharp's greyscale()." });

const STEP_SCHEMAS = { crop: CropStep, resize: ResizeStep, rotate: RotateStep, flip: FlipStep, blur: BlurStep, sharpen: SharpenStep, grayscale: GrayscaleStep } as const;

/** A step of any op: the document's Step component (one of the op schemas, told apart by `op`). */
export const StepSchema = z.discriminatedUnion('op', [CropStep, ResizeStep, RotateStep, FlipStep, BlurStep, SharpenStep, GrayscaleStep]).openapi('Step');

const STEPS_EXAMPLE = [
  { op: 'crop', x: 0, y: 0, width: 80, height: 60 },
  { op: 'resize', width: 40 },
  { op: 'rotate', angle: 90 },
];

/** The array of steps, as the `steps` field's JSON. */
export const StepsSchema = z
  .array(StepSchema)
  .max(MAX_STEPS)
  .openapi('Steps', { description: `At most ${MAX_STEPS} steps, run in order.`, example: STEPS_EXAMPLE });

const STEPS_PROBLEM = `must be a JSON array of at most ${MAX_STEPS} steps, each an object with "op" (${STEP_OPS.join(', ')}) and that op's fields`;

type Issue = { path: (string | number)[]; message: string };

/** The steps of `text`, or the first problem with them, named by index and field. */
function parseSteps(text: string): { steps: Step[] } | { issue: Issue } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { issue: { path: [], message: `is not valid JSON; it ${STEPS_PROBLEM}` } };
  }
  if (!Array.isArray(value)) return { issue: { path: [], message: STEPS_PROBLEM } };
  if (value.length > MAX_STEPS) return { issue: { path: [], message: `has ${value.length} steps; at most ${MAX_STEPS} are allowed` } };
  const steps: Step[] = [];
  for (const [index, step] of value.entries()) {
    if (typeof step !== 'object' || step === null || Array.isArray(step)) return { issue: { path: [index], message: `must be an object with "op" (${STEP_OPS.join(', ')})` } };
    const op = (step as { op?: unknown }).op;
    if (!(STEP_OPS as readonly unknown[]).includes(op)) {
      return { issue: { path: [index, 'op'], message: op === undefined ? `is required: one of ${STEP_OPS.join(', ')}` : `must be one of ${STEP_OPS.join(', ')}` } };
    }
    const parsed = STEP_SCHEMAS[op as StepOp].safeParse(step);
    if (!parsed.success) {
      // A misspelt field is the likelier story than the missing one it leaves: name it first.
      const unknown = parsed.error.issues.find((issue) => issue.code === 'unrecognized_keys');
      if (unknown) {
        return { issue: { path: [index, unknown.keys[0]], message: `is not a field of ${op} (its fields: ${Object.keys(STEP_SCHEMAS[op as StepOp].shape).join(', ')})` } };
      }
      const [first] = parsed.error.issues;
      return { issue: { path: [index, ...(first.path as (string | number)[])], message: first.message } };
    }
    steps.push(toStep(parsed.data));
  }
  return { steps };
}

/** A checked step as the image code takes it (resize's keep_aspect_ratio named as in ResizeOptions). */
function toStep(step: z.infer<typeof StepSchema>): Step {
  if (step.op !== 'resize') return step;
  const { keep_aspect_ratio, ...rest } = step;
  return { ...rest, keepAspectRatio: keep_aspect_ratio };
}

const stepsField = z
  .string({ error: requiredOr(STEPS_PROBLEM) })
  .transform((text, context) => {
    const parsed = parseSteps(text);
    if ('steps' in parsed) return parsed.steps;
    context.addIssue({ code: 'custom', path: parsed.issue.path, message: parsed.issue.message });
    return z.NEVER;
  })
  // contentSchema (JSON Schema's: the schema of the text's content) is passed through to the document
  // as given. Without contentMediaType, which Swagger UI takes for a file upload (no "Try it out").
  .openapi({
    type: 'string',
    contentSchema: { $ref: '#/components/schemas/Steps' },
    description: `JSON text: an array of at most ${MAX_STEPS} steps, run in order, each on the picture as it stands after the ones before it. Its schema is \`Steps\` (under Schemas), one schema per op: \`CropStep\` {"op":"crop","x","y","width","height"}, \`ResizeStep\` {"op":"resize","width","height","keep_aspect_ratio","fit","position"}, \`RotateStep\` {"op":"rotate","angle":90|180|270}, \`FlipStep\` {"op":"flip","axis":"horizontal"|"vertical"}, \`BlurStep\` {"op":"blur","sigma":0.3-1000}, \`SharpenStep\` {"op":"sharpen","sigma":0.5-10}, \`GrayscaleStep\` {"op":"grayscale"}. A bad step is INVALID_PARAMETERS naming its index and field, e.g. "steps[2].sigma".`,
    example: JSON.stringify(STEPS_EXAMPLE),
  } as { description: string });

export const TransformForm = z
  .object({ file: fileField, steps: stepsField, format: optionalFormat, quality, quality_target: qualityTarget, background })
  .superRefine(checkOutput)
  .openapi('TransformForm');
