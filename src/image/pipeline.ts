import { AppError, invalidParameter } from '../errors';
import { FORMATS, readImage, type ImageFile } from './formats/index';
import { assertWithinPixelLimit } from './limits';
import { assertFitsMemory } from './memory-guard';
import { MemoryMeter } from './memory-meter';
import { peakBytes, pixelsOf } from './memory-plan';
import { runAuto, type AutoKit } from './auto-run';
import { autoPlanFor } from './quality/auto-plan';
import { AUTO_FORMATS, AUTO_MAX_QUALITY, autoTargetOf, isAutoFormat, type AutoFormat } from './quality/calibration';
import { sampleLayout } from './quality/sample';
import { decode, working } from './decoding';
import { DEFAULT_QUALITY, WHITE, type PixelLimits, type ProcessedImage, type ProcessedResult, type Region, type RunOptions, type Transform } from './operations';
import { memoryTarget } from './result-buffer';
import type { ResultSink, ResultTarget } from './result-sink';
import { encodeFacts, fitToBudget, holdsPicture, memoryPlan, releasesInput, shrinkCropOnLoad, shrinkOnLoad, shrunkSize, type ProcessingPlan } from './plan';
import { collectPicture, findSmartCut, smartCutOf } from './smart-crop-pass';
import { StageProfile } from './stage-profile';
import { planChain, type StagePlan } from './steps/index';
import { blurRows } from './stages/blur';
import { readColourProfile, toSrgbRows, type ColourProfile } from './stages/colour';
import { cropRows } from './stages/crop';
import { flattenRows } from './stages/flatten';
import { grayscaleRows } from './stages/grayscale';
import { displayedSize, orientRows, storedRegion } from './stages/orient';
import { padRows } from './stages/pad';
import { resizeRows, type SourceWindow } from './stages/resize';
import { closedAtEnd, PackedAllowanceExceeded, pictureRows, withFirstBand, type RowSource } from './stages/rows';
import { sharpenRows } from './stages/sharpen';
import type { Dimensions, ImageFormat } from './types';

/**
 * The whole processing pipeline, in the order every request goes through it:
 *   sniff and read the header (the one parse of the container) -> pixel-limit guard -> container
 *   checks -> (lossless strip | plan every step from the header -> memory guard -> stream rows:
 *   decode (shrink-on-load, or only the rows and columns the leading crops keep) -> colour to sRGB ->
 *   flatten -> the steps' stages in order (crop, resize with cover's cut and contain's pad, blur,
 *   sharpen, grayscale) -> orientation (EXIF's, turned by the rotate and flip steps) -> encode).
 * A smart crop (cover with entropy or attention) scores the resized picture to choose the cut:
 * held whole when it is a thumbnail's or follows other stages (plan.ts holdsPicture), so one
 * decode does, otherwise a reduced decode of the same bytes first (smart-crop-pass.ts), gone
 * before the second. Everything that can be refused from the header is refused before any decode.
 */
export function processImage(input: Uint8Array, transform: Transform, limits: PixelLimits, options: RunOptions = {}): Promise<ProcessedImage> {
  const target = memoryTarget();
  return processImageInto(input, transform, limits, target, options).then((result) => ({ ...result, bytes: target.buffer()!.bytes() }));
}

/**
 * processImage with the file written into a sink `target` opens once the output format is known
 * (storage streams it on in parts); a run that fails leaves the sink to its opener to abort. The
 * run is the only holder of `input` it keeps (ImageFile.release): it is not async itself, so no
 * suspended frame of it holds the bytes.
 */
export function processImageInto(input: Uint8Array, transform: Transform, limits: PixelLimits, target: ResultTarget, options: RunOptions = {}): Promise<ProcessedResult> {
  let file: ImageFile;
  try {
    file = readImage(input);
  } catch (error) {
    return Promise.reject(error);
  }
  return processFile(file, transform, limits, target, options);
}

async function processFile(file: ImageFile, transform: Transform, limits: PixelLimits, target: ResultTarget, options: RunOptions): Promise<ProcessedResult> {
  const { header } = file;
  assertWithinPixelLimit(header, limits.maxInputPixels, 'input');
  file.verify();
  const outputFormat = transform.format ?? header.format;

  if (stripsLosslessly(transform) && outputFormat === header.format && file.strip) {
    const bytes = file.strip();
    const held = file.byteLength + bytes.byteLength;
    const release = options.admit ? await options.admit(held, 0) : () => {};
    try {
      const sink = target.open(header.format, bytes.byteLength);
      sink.writeOwned(bytes);
      await sink.drain();
      return { size: bytes.byteLength, format: header.format, ...displayedSize(header, header.orientation), peakBytes: held, plannedPeakBytes: held };
    } finally {
      release();
    }
  }

  const autoFormats = autoCandidates(transform, outputFormat);
  if (autoFormats) return processAuto(file, transform, limits, target, options, autoFormats);
  if (outputFormat === 'best') throw new Error('format=best reached the plain run');

  const plan = planProcessing({ file, outputFormat, transform, limits, resultHeldBytes: target.heldBytes });
  assertFitsMemory(plan, limits.memoryBudgetBytes);
  const plannedPeakBytes = peakBytes(memoryPlan(plan));
  const release = options.admit ? await options.admit(plannedPeakBytes, estimatedWorkMs(plan)) : () => {};
  try {
    const profile = await readColourProfile(header.colour);
    const meter = new MemoryMeter(file.byteLength);
    const stages = options.profile ? new StageProfile() : null;
    const sink = target.open(outputFormat, FORMATS[outputFormat].resultBound(encodeFacts(plan)), options.share?.turn);
    // As the memory plan counts it: the file goes once its last row is decoded, where nothing reads it again.
    const endOfInput = releasesInput(plan)
      ? () => {
          file.release();
          meter.releaseInput();
        }
      : undefined;
    await meter.run(() => encodePass(plan, sink, { profile, meter, stages, beside: () => 0, endOfInput }), options.share, stages);
    meter.sample(sink.peakHeldBytes);
    const quality = isAutoFormat(outputFormat) ? plan.quality : undefined;
    return { size: sink.length, format: outputFormat, ...plan.output, quality, peakBytes: meter.peakBytes, plannedPeakBytes, stagesMs: stages?.result() };
  } finally {
    release();
  }
}

/** What a pass over the input needs from its run: the colour profile, the meter (with what else the run holds) and the profile of stages. */
interface PassContext {
  profile: ColourProfile | null;
  meter: MemoryMeter;
  stages: StageProfile | null;
  /** Bytes the run holds apart from the pass (quality=auto's sample and results), sampled with it. */
  beside: () => number;
  /** Called once every row is decoded, where the run lets go of its input then (plan.ts releasesInput). */
  endOfInput?: () => void;
}

/**
 * One pass of the input into `sink`: decode, the stages, encode. A picture whose packed buffer
 * outgrew its allowance, with nothing written, is encoded once more in the encoder's low-memory
 * mode, which the plan's peak already covers.
 */
async function encodePass(plan: ProcessingPlan, sink: ResultSink, pass: PassContext): Promise<void> {
  const { meter, stages, beside } = pass;
  const attempt = async (plan: ProcessingPlan) => {
    // Only the source given to the encoder refers to the chain of stages, which closedAtEnd drops.
    let source: RowSource | null = await decodeAndTransform(plan, pass.profile, meter, stages);
    const encoding = async () => {
      // The encoder opens once the first band is ready: where a whole frame splits the run (an
      // orientation the encoder cannot place), the decoder is gone by then, as the memory plan counts.
      let ready: RowSource | null = await withFirstBand(source!);
      source = null;
      meter.sample(ready.heldBytes() + beside());
      const rows = pass.endOfInput ? closedAtEnd(ready, pass.endOfInput) : ready;
      ready = null;
      return encode(plan, meter.metered(working(rows, FORMATS[plan.outputFormat].work.encode), () => sink.heldBytes + beside()), sink);
    };
    return stages ? stages.encode(encoding) : encoding();
  };
  try {
    return await attempt(plan);
  } catch (error) {
    if (!(error instanceof PackedAllowanceExceeded) || sink.length > 0) throw error;
    stages?.restartChain();
    return attempt({ ...plan, lowMemory: true, packedEncodeBytes: undefined });
  }
}

/** The formats quality=auto chooses among: format=best's three, the one asked for, or none (a PNG result, a number). */
function autoCandidates(transform: Transform, outputFormat: ImageFormat | 'best'): AutoFormat[] | null {
  if (outputFormat === 'best') return [...AUTO_FORMATS];
  return transform.quality === 'auto' && isAutoFormat(outputFormat) ? [outputFormat] : null;
}

/**
 * quality=auto (auto-run.ts): every candidate format planned with what auto adds (format=best's
 * candidates that cannot be made at this size are left out), admitted at the largest of their
 * peaks, and run with this run's passes.
 */
async function processAuto(file: ImageFile, transform: Transform, limits: PixelLimits, target: ResultTarget, options: RunOptions, formats: AutoFormat[]): Promise<ProcessedResult> {
  const plans = autoPlans(formats, (format, others) => {
    const auto = { target: autoTargetOf(format, transform.qualityTarget), others };
    const plan = planProcessing({ file, outputFormat: format, transform, limits, resultHeldBytes: target.heldBytes, auto });
    assertFitsMemory(plan, limits.memoryBudgetBytes);
    return plan;
  });
  const plannedPeakBytes = Math.max(...plans.map((plan) => peakBytes(memoryPlan(plan))));
  const release = options.admit ? await options.admit(plannedPeakBytes, autoWorkMs(plans)) : () => {};
  try {
    const profile = await readColourProfile(file.header.colour);
    const meter = new MemoryMeter(file.byteLength);
    const stages = options.profile ? new StageProfile() : null;
    const kit: AutoKit = {
      input: async (plan, beside) => meter.metered(await decodeAndTransform(plan, profile, meter, null), beside),
      encode: (plan, quality, sink, beside) => encodePass({ ...plan, quality }, sink, { profile, meter, stages: null, beside }),
      metered: (source, beside) => meter.metered(source, beside),
      held: (bytes) => meter.sample(bytes),
      step: (name, job) => (stages ? stages.step(name, job) : job()),
      pace: options.share?.turn,
    };
    const outcome = await meter.run(() => runAuto(plans, kit, target), options.share, stages);
    const { plan } = outcome;
    return { size: outcome.size, format: plan.outputFormat, ...plan.output, quality: outcome.quality, score: outcome.score, peakBytes: meter.peakBytes, plannedPeakBytes, stagesMs: stages?.result() };
  } finally {
    release();
  }
}

/**
 * format=best's candidates that can be made here, each planned beside the results of the others it
 * may have to hold: a format that cannot be made even alone is left out, and while some cannot be
 * made beside the rest, the one needing the most memory alone is left out and the rest planned
 * again (a 24 MP photo: AVIF does not fit, and WebP and JPEG fit once no AVIF result is held). A
 * single format's refusal, or the first one where none fits, is the answer.
 */
function autoPlans(formats: AutoFormat[], plan: (format: AutoFormat, others: AutoFormat[]) => ProcessingPlan): ProcessingPlan[] {
  if (formats.length === 1) return [plan(formats[0], [])];
  let firstRefusal: unknown = null;
  const alone = new Map<AutoFormat, number>();
  for (const format of formats) {
    try {
      alone.set(format, peakBytes(memoryPlan(plan(format, []))));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      firstRefusal ??= error;
    }
  }
  let candidates = formats.filter((format) => alone.has(format));
  if (candidates.length === 0) throw firstRefusal;
  for (;;) {
    const plans: ProcessingPlan[] = [];
    const refused: AutoFormat[] = [];
    for (const format of candidates) {
      try {
        plans.push(plan(format, candidates.filter((other) => other !== format)));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        refused.push(format);
      }
    }
    if (refused.length === 0) return plans;
    const largest = refused.reduce((a, b) => (alone.get(b)! > alone.get(a)! ? b : a));
    candidates = candidates.filter((format) => format !== largest);
  }
}

/** remove-metadata's one step alone: the container is rewritten without its metadata, the coded image kept. */
function stripsLosslessly(transform: Transform): boolean {
  return transform.steps.length === 1 && transform.steps[0].op === 'remove-metadata';
}

/** Work a decoded pixel takes: the decode (of all the stored pixels shrink-on-load skips) and colour conversion. */
function decodeWork(plan: ProcessingPlan, profile: ColourProfile | null): number {
  return plan.file.format.work.decode * plan.decode.shrink * plan.decode.shrink + (profile ? STAGE_NS.colour : 0);
}

/**
 * How long the run will work, in ms: the decode (of the stored pixels shrink-on-load skips too),
 * each stage's pixels and the encode, by the formats' measured costs and the stages' figures; the
 * admission tells requests behind the run how long they would wait from it (src/admission).
 */
export function estimatedWorkMs(plan: ProcessingPlan): number {
  const output = FORMATS[plan.outputFormat].cost;
  return inputWorkMs(plan) + (pixelsOf(plan.output) * output.encode) / 1e6 + output.encoderMs;
}

/**
 * quality=auto's work: the sample pass, and per candidate its trials (encodes and decodes of the
 * sample, each scored), its encode and its check (the result decoded and scored; for a whole score
 * the input read once more).
 */
function autoWorkMs(plans: ProcessingPlan[]): number {
  let ms = inputWorkMs(plans[0]);
  for (const plan of plans) {
    const cost = FORMATS[plan.outputFormat].cost;
    const sample = pixelsOf(sampleLayout(plan.output.width, plan.output.height).size);
    const output = pixelsOf(plan.output);
    ms += estimatedWorkMs(plan) + (SAMPLE_TRIALS * (sample * (cost.encode + cost.decode + METRIC_NS) / 1e6 + cost.encoderMs));
    if (plan.auto!.check === 'picture') ms += inputWorkMs(plan) + (output * (cost.decode + METRIC_NS)) / 1e6;
    if (plan.auto!.check === 'sample') ms += (output * cost.decode + sample * METRIC_NS) / 1e6;
  }
  return ms;
}

/** Trials a prediction usually takes, and the metric's work a pixel (quality/score-rows.ts). */
const SAMPLE_TRIALS = 4;
const METRIC_NS = 200;

/** The decode and every stage: a pass's work before the encoder. */
function inputWorkMs(plan: ProcessingPlan): number {
  const pixels = pixelsOf;
  const input = plan.file.format.cost;
  const colour = plan.file.header.colour ? STAGE_NS.colour : 0;
  let ns = pixels(plan.decoded) * (input.decode * plan.decode.shrink * plan.decode.shrink + colour);
  let size = plan.decoded;
  for (const stage of plan.stages) {
    if (stage.kind === 'crop') size = stage.region;
    else if (stage.kind === 'resize') {
      size = stage.to;
      ns += pixels(size) * STAGE_NS.resize;
    } else ns += pixels(size) * STAGE_NS[stage.kind];
  }
  return ns / 1e6;
}

/** Estimated nanoseconds a pixel takes in the TypeScript stages (measured in workerd on the 12 MP photo). */
const STAGE_NS = { colour: 12, resize: 15, blur: 40, sharpen: 120, grayscale: 8 };

type Stage = (name: string, source: RowSource) => RowSource;

/** The steps between decoder and encoder, each a stage that passes bands of rows on (timed by `stages` if given). */
async function decodeAndTransform(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, stages: StageProfile | null): Promise<RowSource> {
  const stage: Stage = (name, source) => (stages ? stages.stage(name, source) : source);
  const step = <T>(name: string, job: () => Promise<T>) => (stages ? stages.step(name, job) : job());
  if (plan.orientStripRows) return stage('decode', await orientedStrips(plan, profile, meter));
  const planned = [...plan.stages];
  const [first] = planned;
  if (first?.kind === 'resize' && first.smart && !holdsPicture(plan, 0)) {
    // First in the chain and large: a reduced decode of the same bytes chooses the cut, before the decode that keeps it.
    const cut = await step('smart-crop', () => findSmartCut(first.smart!, first.to, plan, profile, meter));
    planned[0] = { ...first, cut };
  }
  let source = await decodedRows(plan, profile, meter, stage);
  for (const [index, next] of planned.entries()) {
    if (next.kind !== 'resize' || !holdsPicture(plan, index)) {
      source = stagedRows(source, next, stage);
      continue;
    }
    const resized = resizedRows(source, next.to, null, stage, next.shown);
    const { model, alpha, grey } = resized;
    const picture = await collectPicture(resized, meter);
    const cut = await step('smart-crop', () => smartCutOf(next.smart!, plan, picture, meter));
    stages?.restartChain();
    source = placedRows(pictureRows(picture, { model, alpha, grey }), { ...next, cut }, stage);
  }
  if (!plan.orientInEncoder) source = stage('orient', orientRows(source, plan.orientation));
  return source;
}

/** One planned stage over `source` (a smart resize's cut is chosen by decodeAndTransform first). */
function stagedRows(source: RowSource, planned: StagePlan, stage: Stage): RowSource {
  switch (planned.kind) {
    case 'crop':
      return stage('crop', cropRows(source, planned.region));
    case 'resize':
      return placedRows(resizedRows(source, planned.to, planned.cut, stage, planned.shown), planned, stage);
    case 'blur':
      return stage('blur', working(blurRows(source, planned.sigma), STAGE_NS.blur));
    case 'sharpen':
      return stage('sharpen', working(sharpenRows(source, planned.sigma), STAGE_NS.sharpen));
    case 'grayscale':
      return stage('grayscale', working(grayscaleRows(source), STAGE_NS.grayscale));
  }
}

/**
 * The result's rows a strip of plan.orientStripRows at a time (plan.ts withOrientStrips): the
 * stored region each strip shows is decoded as a crop is, and turned in a frame of the strip.
 */
async function orientedStrips(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter): Promise<RowSource> {
  const { orientation, stored, output } = plan;
  const untimed: Stage = (_name, source) => source;
  let next = 0;
  let offset = 0;
  const open = async (): Promise<RowSource> => {
    const rows = Math.min(plan.orientStripRows!, output.height - next);
    const region = storedRegion({ x: 0, y: next, width: output.width, height: rows }, orientation, stored);
    const regionPlan = { ...plan, decode: { ...plan.decode, region }, decoded: { width: region.width, height: region.height } };
    const strip = orientRows(await decodedRows(regionPlan, profile, meter, untimed), orientation);
    offset = next;
    next += rows;
    return strip;
  };
  let strip: RowSource | null = await open();
  const { model, alpha, grey } = strip;
  return {
    width: output.width,
    height: output.height,
    model,
    alpha,
    grey,
    async read() {
      while (strip) {
        const band = await strip.read();
        if (band) return { ...band, y: band.y + offset };
        strip.close();
        strip = next < output.height ? await open() : null;
      }
      return null;
    },
    heldBytes: () => strip?.heldBytes() ?? 0,
    close: () => {
      strip?.close();
      strip = null;
    },
  };
}

/** decode -> colour -> flatten: the picture the steps start from. */
async function decodedRows(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, stage: Stage): Promise<RowSource> {
  const decoded = stage('decode', await decode(plan.file, plan.decode, plan.decoded));
  let source = working(decoded, decodeWork(plan, profile));
  meter.sample(source.heldBytes());
  const converted = toSrgbRows(source, profile);
  if (converted !== source) source = stage('colour', converted);
  if (plan.flatten) source = stage('flatten', flattenRows(source, plan.background));
  return source;
}

/**
 * Lanczos-3 to `to` (only the columns `cut` keeps) of the part `shown` of the rows (all of them
 * where null), or the rows as they are where that is already `to`.
 */
function resizedRows(source: RowSource, to: Dimensions, cut: Region | null, stage: Stage, shown: SourceWindow | null = null): RowSource {
  if (!shown && source.width === to.width && source.height === to.height) return source;
  return stage('resize', resizeRows(working(source, STAGE_NS.resize), to.width, to.height, cut && { x: cut.x, width: cut.width }, shown));
}

/** cut (cover) -> pad (contain): the resized rows placed as the resize step leaves them. */
function placedRows(source: RowSource, planned: Extract<StagePlan, { kind: 'resize' }>, stage: Stage): RowSource {
  const { cut, pad } = planned;
  if (cut) source = stage('cut', cropRows(source, source.width === cut.width ? { ...cut, x: 0 } : cut));
  if (pad) source = stage('pad', padRows(source, pad.box, pad.at, pad.colour));
  return source;
}

/** What the encoder makes of the rows; decoding errors that surface while rows are read stay decoding errors. */
async function encode(plan: ProcessingPlan, source: RowSource, sink: ResultSink): Promise<void> {
  const { encoder, label } = FORMATS[plan.outputFormat];
  const options = {
    quality: plan.quality,
    orientation: plan.orientInEncoder ? plan.orientation : 1,
    lowMemory: plan.lowMemory,
    maxBytes: plan.maxResultBytes,
    packedBytes: plan.packedEncodeBytes,
  };
  try {
    await encoder.encode(source, options, sink);
  } catch (error) {
    if (error instanceof AppError || error instanceof PackedAllowanceExceeded) throw error;
    throw new AppError('CONVERSION_FAILED', `Encoding the result as ${label} failed.`, error);
  } finally {
    source.close();
  }
}

interface PlanInput {
  resultHeldBytes: ProcessingPlan['resultHeldBytes'];
  file: ImageFile;
  outputFormat: ImageFormat;
  transform: Transform;
  limits: PixelLimits;
  /** quality=auto's target and format=best's other candidates (quality/auto-plan.ts). */
  auto?: { target: number; others: AutoFormat[] };
}

/**
 * Every step decided from the header (steps/index.ts), checked against the request's rules, then
 * how the decoder starts: the leading crops become the stored region it decodes, or a first resize
 * takes the decoder's largest shrink-on-load that leaves at least its size (after the leading
 * crops too, where they lie on the scaled picture's pixels: plan.ts shrinkCropOnLoad).
 */
function planProcessing(facts: PlanInput): ProcessingPlan {
  const { file, outputFormat, transform, limits } = facts;
  const { header } = file;
  const stored = { width: header.width, height: header.height };
  const { supportsAlpha } = FORMATS[outputFormat];
  const background = transform.background ?? WHITE;
  const flatten = header.alpha && !supportsAlpha;
  const chain = planChain(transform, { size: stored, orientation: header.orientation, alpha: header.alpha && !flatten }, { limits, background, outputHasAlpha: supportsAlpha });
  const output = displayedSize(chain.frame.size, chain.frame.orientation);
  assertEncodable(outputFormat, output);
  const stages = [...chain.stages];
  let region: Region | null = null;
  let shrink = 1;
  if (stages[0]?.kind === 'crop') {
    region = (stages.shift() as Extract<StagePlan, { kind: 'crop' }>).region;
    const next = stages.at(0);
    if (next?.kind === 'resize') {
      const onLoad = shrinkCropOnLoad(file.format.shrinkFactors, stored, region, next.to);
      ({ shrink, region } = onLoad);
      if (onLoad.shown) stages[0] = { ...next, shown: onLoad.shown };
    }
  } else if (stages[0]?.kind === 'resize') shrink = shrinkOnLoad(file.format.shrinkFactors, stored, stages[0].to);
  const auto = facts.auto && isAutoFormat(outputFormat) ? autoPlanFor(output, outputFormat, facts.auto.target, facts.auto.others) : undefined;
  // An auto result is planned at the highest quality it may take, and held where it may be replaced.
  const quality = auto ? AUTO_MAX_QUALITY : typeof transform.quality === 'number' ? transform.quality : DEFAULT_QUALITY;
  const plan: ProcessingPlan = {
    file,
    inputBytes: file.byteLength,
    stored,
    orientation: chain.frame.orientation,
    decode: { shrink, region },
    decoded: region ? { width: region.width, height: region.height } : shrunkSize(stored, shrink),
    alpha: header.alpha || chain.frame.alpha,
    grey: false,
    flatten,
    background,
    stages,
    orientInEncoder: FORMATS[outputFormat].encoder.placesOrientation,
    outputFormat,
    output,
    quality,
    lowMemory: false,
    resultHeldBytes: facts.resultHeldBytes,
    auto,
  };
  return fitToBudget(plan, limits.memoryBudgetBytes);
}

function assertEncodable(format: ImageFormat, size: Dimensions): void {
  const { maxDimension, label } = FORMATS[format];
  if (size.width > maxDimension || size.height > maxDimension) {
    throw invalidParameter(
      'format',
      `${label} images can be at most ${maxDimension} pixels per side and the result would be ${size.width}x${size.height}; choose another format or a smaller size`,
    );
  }
}
