import { AppError, invalidParameter } from '../errors';
import { FORMATS, readImage, type ImageFile } from './formats/index';
import { assertFitsMemory, assertWithinPixelLimit } from './limits';
import { MemoryMeter } from './memory-meter';
import { peakBytes } from './memory-plan';
import { decode, working } from './decoding';
import { fitGeometry, type FitGeometry } from './fit';
import { WHITE, type Operation, type PixelLimits, type ProcessedImage, type ProcessedResult, type Region, type RunOptions } from './operations';
import { memoryTarget } from './result-buffer';
import type { ResultSink, ResultTarget } from './result-sink';
import { encodeFacts, fitToBudget, holdsResizedPicture, memoryPlan, shrinkOnLoad, shrunkSize, type ProcessingPlan } from './plan';
import { collectPicture, findSmartCut, smartCutOf } from './smart-crop-pass';
import { StageProfile } from './stage-profile';
import { readColourProfile, toSrgbRows, type ColourProfile } from './stages/colour';
import { cropRows } from './stages/crop';
import { flattenRows } from './stages/flatten';
import { orientRows, storedRegion } from './stages/orient';
import { padRows } from './stages/pad';
import { resizeRows } from './stages/resize';
import { PackedAllowanceExceeded, pictureRows, withFirstBand, type RowSource } from './stages/rows';
import type { Dimensions, ImageFormat } from './types';

/** image-api.md: resize sides are 1 to 12000 pixels, also when one side follows the other. */
export const MAX_RESIZE_SIDE = 12_000;

/**
 * The whole processing pipeline, in the order every request goes through it:
 *   sniff and read the header (the one parse of the container) -> pixel-limit guard -> container
 *   checks -> (lossless strip | plan every step from the header -> memory guard -> stream rows:
 *   decode (shrink-on-load, or only the rows and columns a crop needs) -> colour to sRGB ->
 *   flatten -> resize -> cut (cover) -> pad (contain) -> orientation -> encode).
 * A smart crop (cover with entropy or attention) scores the resized picture to choose the cut:
 * held whole when it is a thumbnail's (plan.ts holdsResizedPicture), so one decode does, otherwise
 * a reduced decode of the same bytes first (smart-crop-pass.ts), gone before the second.
 * Everything that can be refused from the header is refused before any decode.
 */
export async function processImage(input: Uint8Array, operation: Operation, limits: PixelLimits, options: RunOptions = {}): Promise<ProcessedImage> {
  const target = memoryTarget();
  const result = await processImageInto(input, operation, limits, target, options);
  return { ...result, bytes: target.buffer()!.bytes() };
}

/**
 * processImage with the file written into a sink `target` opens once the output format is known
 * (storage streams it on in parts); a run that fails leaves the sink to its opener to abort.
 */
export async function processImageInto(input: Uint8Array, operation: Operation, limits: PixelLimits, target: ResultTarget, options: RunOptions = {}): Promise<ProcessedResult> {
  const file = readImage(input);
  const { header } = file;
  assertWithinPixelLimit(header, limits.maxInputPixels, 'input');
  file.verify();
  const outputFormat = operation.format ?? header.format;

  if (operation.kind === 'remove-metadata' && outputFormat === header.format && file.strip) {
    const bytes = file.strip();
    const held = input.byteLength + bytes.byteLength;
    const release = options.admit ? await options.admit(held) : () => {};
    try {
      const sink = target.open(header.format, bytes.byteLength);
      sink.writeOwned(bytes);
      await sink.drain();
      return { size: bytes.byteLength, format: header.format, ...displayedSize(header, header.orientation), peakBytes: held, plannedPeakBytes: held };
    } finally {
      release();
    }
  }

  const plan = planProcessing({ file, outputFormat, operation, limits, resultHeldBytes: target.heldBytes });
  assertFitsMemory(plan, limits.memoryBudgetBytes);
  const plannedPeakBytes = peakBytes(memoryPlan(plan));
  const release = options.admit ? await options.admit(plannedPeakBytes) : () => {};
  try {
    const profile = await readColourProfile(header.colour);
    const meter = new MemoryMeter(input.byteLength);
    const stages = options.profile ? new StageProfile() : null;
    const sink = target.open(outputFormat, FORMATS[outputFormat].resultBound(encodeFacts(plan)), options.share?.turn);
    const attempt = async (plan: ProcessingPlan) => {
      const source = await decodeAndTransform(plan, profile, meter, stages);
      const encoding = async () => {
        // The encoder opens once the first band is ready: where a whole frame splits the run (an
        // orientation the encoder cannot place), the decoder is gone by then, as the memory plan counts.
        const ready = await withFirstBand(source);
        meter.sample(ready.heldBytes());
        return encode(plan, meter.metered(working(ready, FORMATS[plan.outputFormat].work.encode), () => sink.heldBytes), sink);
      };
      return stages ? stages.encode(encoding) : encoding();
    };
    await meter.run(
      async () => {
        try {
          return await attempt(plan);
        } catch (error) {
          // A picture whose packed buffer outgrew its allowance, with nothing written: once more in
          // the encoder's low-memory mode, which the plan's peak already covers.
          if (!(error instanceof PackedAllowanceExceeded) || sink.length > 0) throw error;
          stages?.restartChain();
          return attempt({ ...plan, lowMemory: true, packedEncodeBytes: undefined });
        }
      },
      options.share,
      stages,
    );
    meter.sample(sink.peakHeldBytes);
    return { size: sink.length, format: outputFormat, ...plan.output, peakBytes: meter.peakBytes, plannedPeakBytes, stagesMs: stages?.result() };
  } finally {
    release();
  }
}


/** Work a decoded pixel takes: the decode (of all the stored pixels shrink-on-load skips), colour conversion and resize. */
function decodeWork(plan: ProcessingPlan, profile: ColourProfile | null): number {
  const { decode, resize } = plan;
  return plan.file.format.work.decode * decode.shrink * decode.shrink + (profile ? STAGE_NS.colour : 0) + (resize ? STAGE_NS.resize : 0);
}

/** Estimated nanoseconds a pixel takes in the TypeScript stages (measured in workerd on the 12 MP photo). */
const STAGE_NS = { colour: 12, resize: 15 };

/** The steps between decoder and encoder, each a stage that passes bands of rows on (timed by `stages` if given). */
async function decodeAndTransform(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, stages: StageProfile | null): Promise<RowSource> {
  const stage = (name: string, source: RowSource) => (stages ? stages.stage(name, source) : source);
  const step = <T>(name: string, job: () => Promise<T>) => (stages ? stages.step(name, job) : job());
  if (holdsResizedPicture(plan)) {
    const resized = await resizedRows(plan, profile, meter, stage);
    const { model, alpha, grey } = resized;
    const picture = await collectPicture(resized, meter);
    const cut = await step('smart-crop', () => smartCutOf(plan, picture, meter));
    stages?.restartChain();
    return placedRows(pictureRows(picture, { model, alpha, grey }), { ...plan, cut }, stage);
  }
  if (plan.orientStripRows) return stage('decode', await orientedStrips(plan, profile, meter));
  const cut = plan.smart ? await step('smart-crop', () => findSmartCut(plan, profile, meter)) : plan.cut;
  return placedRows(await resizedRows({ ...plan, cut }, profile, meter, stage), { ...plan, cut }, stage);
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
    const strip = orientRows(await resizedRows(regionPlan, profile, meter, untimed), orientation);
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

type Stage = (name: string, source: RowSource) => RowSource;

/** decode -> colour -> flatten -> resize (of only the columns a cut keeps). */
async function resizedRows(plan: ProcessingPlan, profile: ColourProfile | null, meter: MemoryMeter, stage: Stage): Promise<RowSource> {
  const decoded = stage('decode', await decode(plan.file, plan.decode, plan.decoded));
  let source = working(decoded, decodeWork(plan, profile));
  meter.sample(source.heldBytes());
  const converted = toSrgbRows(source, profile);
  if (converted !== source) source = stage('colour', converted);
  if (plan.flatten) source = stage('flatten', flattenRows(source, plan.background));
  const { cut } = plan;
  if (plan.resize) source = stage('resize', resizeRows(source, plan.resize.width, plan.resize.height, cut && { x: cut.x, width: cut.width }));
  return source;
}

/** cut (cover) -> pad (contain) -> orientation: the resized rows placed as the result shows them. */
function placedRows(source: RowSource, plan: ProcessingPlan, stage: Stage): RowSource {
  const { cut } = plan;
  if (cut) source = stage('cut', cropRows(source, source.width === cut.width ? { ...cut, x: 0 } : cut));
  if (plan.pad) source = stage('pad', padRows(source, plan.pad.box, plan.pad.at, padColour(plan)));
  if (!plan.orientInEncoder) source = stage('orient', orientRows(source, plan.orientation));
  return source;
}

/** contain's padding: opaque where the output format has no alpha. */
function padColour(plan: ProcessingPlan) {
  return FORMATS[plan.outputFormat].supportsAlpha ? plan.background : { ...plan.background, a: 255 };
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
  operation: Operation;
  limits: PixelLimits;
}

/** Every step decided from the header: the output size (checked against the request's rules), decode options, resize target, cut and padding. */
function planProcessing(facts: PlanInput): ProcessingPlan {
  const { file, outputFormat, operation, limits, resultHeldBytes } = facts;
  const { header } = file;
  const { orientation } = header;
  const stored = { width: header.width, height: header.height };
  const displayed = displayedSize(stored, orientation);
  const geometry = operation.kind === 'resize' ? checkedGeometry(operation, displayed, file.format.shrinkFactors.length > 1, limits) : null;
  const output = geometry ? geometry.output : plannedSize(operation, displayed);
  assertEncodable(outputFormat, output);
  const inStoredOrientation = (size: Dimensions) => displayedSize(size, orientation);
  const region: Region | null = operation.kind === 'crop' ? storedRegion(operation.region, orientation, stored) : null;
  let shrink = 1;
  let resize: Dimensions | null = null;
  if (geometry) {
    const target = inStoredOrientation(geometry.resized);
    shrink = shrinkOnLoad(file.format.shrinkFactors, stored, target);
    const decoded = shrunkSize(stored, shrink);
    if (decoded.width !== target.width || decoded.height !== target.height) resize = target;
  }
  const decoded = region ? { width: region.width, height: region.height } : shrunkSize(stored, shrink);
  const { supportsAlpha } = FORMATS[outputFormat];
  const background = operation.background ?? WHITE;
  const padsTransparent = geometry?.pad != null && background.a < 255 && supportsAlpha;
  const plan: ProcessingPlan = {
    file,
    inputBytes: file.bytes.byteLength,
    stored,
    orientation,
    decode: { shrink, region },
    decoded,
    alpha: header.alpha || padsTransparent,
    grey: false,
    flatten: header.alpha && !supportsAlpha,
    background,
    resize,
    cut: geometry?.crop ? storedRegion(geometry.crop, orientation, inStoredOrientation(geometry.resized)) : null,
    pad: geometry?.pad ? { box: inStoredOrientation(output), at: storedRegion(geometry.pad, orientation, inStoredOrientation(output)) } : null,
    smart: geometry?.smart ? { strategy: geometry.smart, box: output } : null,
    orientInEncoder: FORMATS[outputFormat].encoder.placesOrientation,
    outputFormat,
    output,
    quality: operation.quality,
    lowMemory: false,
    resultHeldBytes,
  };
  return fitToBudget(plan, limits.memoryBudgetBytes);
}

function displayedSize(stored: Dimensions, orientation: number): Dimensions {
  return orientation >= 5 ? { width: stored.height, height: stored.width } : stored;
}

/** The size of a convert or crop result, checked against the request's rules. */
function plannedSize(operation: Operation, displayed: Dimensions): Dimensions {
  if (operation.kind === 'crop') return checkedRegion(operation.region, displayed);
  return displayed;
}

/**
 * A resize's sizes, checked: the result and the picture before cover's cut are each at most
 * MAX_RESIZE_SIDE per side and within the output pixel limit.
 */
function checkedGeometry(operation: Extract<Operation, { kind: 'resize' }>, displayed: Dimensions, dctScaling: boolean, limits: PixelLimits): FitGeometry {
  const geometry = fitGeometry(displayed, operation, dctScaling);
  for (const size of [geometry.output, geometry.resized]) {
    if (size.width > MAX_RESIZE_SIDE || size.height > MAX_RESIZE_SIDE) {
      throw invalidParameter(
        operation.width !== undefined ? 'width' : 'height',
        `the resized image would be ${size.width}x${size.height} pixels (the image is ${displayed.width}x${displayed.height}); each side may be at most ${MAX_RESIZE_SIDE}`,
      );
    }
    assertWithinPixelLimit(size, limits.maxOutputPixels, 'output');
  }
  return geometry;
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

/** decisions.md: a region partly or wholly outside the image, or empty, is refused with the image size. */
function checkedRegion(region: Region, image: Dimensions): Dimensions {
  const { x, y, width, height } = region;
  const field =
    width === 0 ? 'width'
    : height === 0 ? 'height'
    : x >= image.width ? 'x'
    : y >= image.height ? 'y'
    : x + width > image.width ? 'width'
    : y + height > image.height ? 'height'
    : null;
  if (field === null) return { width, height };
  const problem = width === 0 || height === 0 ? 'the crop region is empty' : 'the crop region lies outside the image';
  throw invalidParameter(
    field,
    `${problem}; the image is ${image.width}x${image.height} pixels (as displayed, after EXIF orientation), so x + width must be at most ${image.width} and y + height at most ${image.height}`,
  );
}
