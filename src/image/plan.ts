import { FORMATS, type ImageFile } from './formats/index';
import { largestFitting, MB, peakBytes, pixelsOf, type MemoryPlan } from './memory-plan';
import type { Colour, Region } from './operations';
import { ATTENTION_SIDE } from './smart-crop';
import { sizeAfter, type StagePlan } from './steps/index';
import { blurBytes } from './stages/blur';
import { grayscaleBytes } from './stages/grayscale';
import { displayedSize } from './stages/orient';
import { orientedFrameChannels } from './stages/oriented-frame';
import { resizeScratchBytes, resizeScratchBytesEither, type SourceWindow } from './stages/resize';
import { BAND_ROWS_MAX, type DecodeOptions } from './stages/rows';
import { sharpenBytes } from './stages/sharpen';
import { profileStaysInFile } from './stages/colour';
import type { Dimensions, ImageFormat } from './types';
import { autoMemory, autoPlanFor, type AutoPlan } from './quality/auto-plan';
import { isAutoFormat } from './quality/calibration';

/**
 * Everything a run will do, decided from the header before any decode (as sharp records its
 * options first and one pipeline then runs them): decode (shrink-on-load for a first resize, or the
 * stored region of the leading crops) -> colour -> flatten -> the steps' stages in order (crop,
 * resize with cover's cut and contain's pad, blur, sharpen, grayscale) -> orientation (the EXIF
 * one turned by the rotate and flip steps) -> encode. A smart crop scores the resized picture, held
 * whole when it is small or follows other stages (holdsResizedPicture), otherwise a second, reduced
 * decode (smart-crop-pass.ts).
 */
export interface ProcessingPlan {
  /** The input with its header (formats/format.ts). */
  file: ImageFile;
  /** Bytes of the input held; scaled when the memory guard looks for the largest size that fits. */
  inputBytes: number;
  /** Size as stored (before orientation). */
  stored: Dimensions;
  /** How the result shows the stored pixels: the EXIF orientation turned by the rotate and flip steps. */
  orientation: number;
  decode: DecodeOptions;
  /** Size the decoder hands out: the stored region (at 1/shrink), or the stored size divided by the shrink. */
  decoded: Dimensions;
  /** What the header says the pixels can hold; a decoder may find less (all opaque), never more. */
  alpha: boolean;
  grey: boolean;
  /** Composite onto `background`: the input has alpha and the output format has none. */
  flatten: boolean;
  /** Flattening colour (alpha ignored there) and contain's padding. */
  background: Colour;
  /**
   * The steps between decoding and orientation, in stored orientation (steps/index.ts); a smart
   * resize's cut is set once it is chosen.
   */
  stages: StagePlan[];
  /** The encoder writes rows where a viewer sees them itself (WebP), so no oriented frame is built. */
  orientInEncoder: boolean;
  /** The oriented frame holds this many rows of the result at a time, each strip decoded on its own (withOrientStrips). */
  orientStripRows?: number;
  outputFormat: ImageFormat;
  /** Size of the result as displayed. */
  output: Dimensions;
  quality: number;
  /** The encoder's low-memory mode (chooseLowMemory). */
  lowMemory: boolean;
  /** The encoder's normal mode with its buffer packed within this many bytes of values (withPackedEncode). */
  packedEncodeBytes?: number;
  /** Most bytes the result may have where less than its format's bound (fitResultToBudget). */
  maxResultBytes?: number;
  /** What the result's sink holds for a file of at most `fileBytes` written in bursts of `burstBytes` (ResultTarget.heldBytes). */
  resultHeldBytes: (fileBytes: number, burstBytes: number) => number;
  /** quality=auto: how the result is chosen and checked (quality/auto-plan.ts); `quality` is then the highest it may take. */
  auto?: AutoPlan;
}

/** libjpeg's scaled size: ceil(side / shrink). */
export function shrunkSize({ width, height }: Dimensions, shrink: number): Dimensions {
  return { width: Math.ceil(width / shrink), height: Math.ceil(height / shrink) };
}

/**
 * Shrink-on-load: the largest factor the decoder offers that still leaves at least the target
 * size, as sharp picks libjpeg's DCT scaling by default (fastShrinkOnLoad); Lanczos-3 does the rest.
 */
export function shrinkOnLoad(factors: readonly number[], from: Dimensions, to: Dimensions): number {
  const shrink = Math.min(from.width / to.width, from.height / to.height);
  let best = 1;
  for (const factor of factors) if (factor <= shrink && factor > best) best = factor;
  return best;
}

/**
 * Shrink-on-load for a crop that a resize follows: the factor shrinkOnLoad would take for the
 * crop's size. The decoder hands out the pixels of its scaled decode that the crop touches
 * (`region`, in the scaled picture's coordinates); where the crop's edges fall between them (a side
 * not on a multiple of the factor, short of the picture's edge), `shown` is where they fall, for
 * the resize to show exactly that part. 1, the crop as it is and nothing `shown` where no factor
 * leaves the resize its size.
 */
export function shrinkCropOnLoad(factors: readonly number[], stored: Dimensions, crop: Region, to: Dimensions): { shrink: number; region: Region; shown: SourceWindow | null } {
  const shrink = shrinkOnLoad(factors, crop, to);
  if (shrink === 1) return { shrink, region: crop, shown: null };
  const scaled = shrunkSize(stored, shrink);
  const x = Math.floor(crop.x / shrink);
  const y = Math.floor(crop.y / shrink);
  const right = Math.min(scaled.width, Math.ceil((crop.x + crop.width) / shrink));
  const bottom = Math.min(scaled.height, Math.ceil((crop.y + crop.height) / shrink));
  const region = { x, y, width: right - x, height: bottom - y };
  // The crop's edges in the scaled picture; its right and bottom edges at the picture's are the scaled picture's.
  const edge = (start: number, length: number, side: number, scaledSide: number) => (start + length === side ? scaledSide : (start + length) / shrink);
  const shown = { x: crop.x / shrink - x, y: crop.y / shrink - y, width: edge(crop.x, crop.width, stored.width, scaled.width) - crop.x / shrink, height: edge(crop.y, crop.height, stored.height, scaled.height) - crop.y / shrink };
  const exact = shown.x === 0 && shown.y === 0 && shown.width === region.width && shown.height === region.height;
  return { shrink, region, shown: exact ? null : shown };
}

/**
 * Whether the run lets go of its input once every row is decoded (pipeline.ts), so that an encoder
 * that then works on the picture it collected (libwebp) does not hold the upload beside its work:
 * a run that decodes once (no quality=auto, whose correction encodes again, and no packed encoder
 * buffer, whose overflow does), whose colour profile is a copy (colour/index.ts copies those up to
 * 1 MiB; a larger one stays a view of the file).
 */
export function releasesInput(plan: ProcessingPlan, encoderFinishes = FORMATS[plan.outputFormat].encodeCost(encodeFacts(plan)).finishing !== undefined): boolean {
  if (plan.auto || plan.packedEncodeBytes !== undefined || !encoderFinishes) return false;
  return !profileStaysInFile(plan.file.header.colour);
}

/** What the plan's steps hold, for the memory guard (memory-plan.ts). */
export function memoryPlan(plan: ProcessingPlan): MemoryPlan {
  const { decoded, output, grey } = plan;
  const carriesAlpha = plan.alpha && !plan.flatten;
  const decoder = plan.file.decodeCost({ inputBytes: plan.inputBytes, stored: plan.stored, decode: plan.decode, decoded });
  const format = FORMATS[plan.outputFormat];
  const facts = encodeFacts(plan);
  const cost = format.encodeCost(facts);
  // A quality=auto result that may still be replaced is held whole until it is final.
  const resultHeld = plan.auto?.holdsResult ? format.resultBound(facts) : plan.resultHeldBytes(format.resultBound(facts), cost.burstBytes);
  const encoder =
    cost.finishing === undefined
      ? { streaming: cost.streaming + resultHeld }
      : { streaming: cost.streaming, finishing: cost.finishing + resultHeld };
  let stages = 0;
  let frame = 0;
  // Stages after a held picture run once it is complete, beside the encoder.
  let afterFrame = 0;
  let held = false;
  if (plan.decode.region) stages += band(decoded.width);
  let size = decoded;
  let alpha = plan.file.header.alpha && !plan.flatten;
  plan.stages.forEach((stage, index) => {
    let bytes = 0;
    if (stage.kind === 'crop') bytes = band(stage.region.width);
    if (stage.kind === 'blur') bytes = blurBytes(size, stage.sigma, alpha);
    if (stage.kind === 'sharpen') bytes = sharpenBytes(size, stage.sigma);
    if (stage.kind === 'grayscale') bytes = grayscaleBytes();
    if (stage.kind === 'resize') {
      const { to, cut, pad, smart } = stage;
      if (to.width !== size.width || to.height !== size.height) bytes += resizeScratchBytes(size, to, !alpha, cut && { x: cut.x, width: cut.width }) + band(to.width);
      if (cut) bytes += band(cut.width);
      if (pad) bytes += band(pad.box.width);
      if (smart?.strategy === 'entropy') bytes += entropyPassBytes(size, to);
      if (holdsPicture(plan, index)) {
        // Complete before the cut is known: what follows starts once it is scored (a frame splits the run).
        frame += 4 * pixelsOf(to);
        if (smart!.strategy === 'attention') bytes += attentionCopyBytes(to);
        held = true;
        stages += bytes;
        size = sizeAfter(stage, size);
        return;
      }
      alpha ||= pad?.transparent ?? false;
    }
    stages += bytes;
    if (held) afterFrame += bytes;
    size = sizeAfter(stage, size);
  });
  const reordersRows = plan.orientation >= 3 && !plan.orientInEncoder;
  const strips = reordersRows && plan.orientStripRows !== undefined;
  if (reordersRows) {
    const framePixels = strips ? plan.orientStripRows! * output.width : pixelsOf(size);
    frame += orientedFrameChannels({ alpha: carriesAlpha, grey }) * framePixels;
    stages += band(output.width);
    // A strip's stored region is decoded as a crop is (its band is at most the stored width).
    if (strips) stages += band(plan.stored.width);
  }
  const run: MemoryPlan = { inputBytes: plan.inputBytes, decoder, stages, frame, frameInStrips: strips, afterFrame, encoder, releasesInput: releasesInput(plan, cost.finishing !== undefined) };
  if (!plan.auto || !isAutoFormat(plan.outputFormat)) return run;
  // Reading the encoder's input once more (a whole-picture score) holds the decoder and stages
  // again, and turns rows an encoder would have placed (a frame for orientations 3-8).
  const turnsRows = plan.orientInEncoder && plan.orientation >= 3 ? orientedFrameChannels({ alpha: carriesAlpha, grey }) * pixelsOf(output) : 0;
  const reread = decoder.streaming + stages + frame + turnsRows;
  return { ...run, auto: autoMemory(plan.auto, plan.outputFormat, facts, reread) };
}

/**
 * Least rows of a strip worth decoding again for (withOrientStrips): below it, the decodes of the
 * whole file's entropy-coded data would take longer than the result is worth waiting for.
 */
const ORIENT_STRIP_MIN_ROWS = 256;

/**
 * Where an oriented frame (an EXIF orientation 3-8 for a PNG or AVIF result, which are written top
 * to bottom) would take the run over the line (NORMAL_MODE_MAX_BYTES, else the budget), a full-size
 * result of a JPEG is made a strip of rows at a time: each strip's stored columns (5-8) or rows
 * (3-4) are decoded as a crop, turned and encoded before the next. libjpeg skips the inverse DCT
 * of the columns a strip leaves out, not the entropy decoding, so each strip costs a pass over the
 * file's coded data: as few strips as fit. (A portrait 24 MP photo to AVIF needed a 72 MB frame.)
 */
function withOrientStrips(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const reordersRows = plan.orientation >= 3 && !plan.orientInEncoder;
  const whole = plan.stages.length === 0 && !plan.decode.region;
  if (!reordersRows || !whole || plan.file.format.name !== 'jpg') return plan;
  // The decoder's mode is chosen after this (chooseDecoderLowMemory): a progressive file's packed
  // coefficients count here at the least fitDecoderToBudget allows them, half their worst case.
  const packs = plan.file.lowMemoryDecodeBytes;
  const peak = (p: ProcessingPlan) => Math.min(peakBytes(memoryPlan(p)), packs ? peakBytes(memoryPlan(withPackedBytes(p, packs() / 2))) : Infinity);
  for (const line of [Math.min(budgetBytes, NORMAL_MODE_MAX_BYTES), budgetBytes]) {
    if (peak(plan) <= line) return plan;
    const fits = (rows: number) => peak({ ...plan, orientStripRows: rows }) <= line;
    let [low, high] = [0, plan.output.height];
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (fits(middle)) low = middle;
      else high = middle - 1;
    }
    const rows = Math.floor(low / 16) * 16;
    if (rows >= ORIENT_STRIP_MIN_ROWS) return { ...plan, orientStripRows: rows };
  }
  return plan;
}

const band = (width: number) => BAND_ROWS_MAX * width * 4;

/** Pixels of the reduced picture a smart crop looks at, at most: a 400x400 thumbnail's cover size of a 3:2 photo is 600x400. */
export const SMART_CROP_MAX_PIXELS = 512 * 512;

/**
 * A smart crop of a small resized picture (a thumbnail's cover size) holds it whole: one decode
 * fills it, it is scored, and the cut is read from it. A larger one first in the chain is scored on
 * a second, reduced decode instead, so that no run holds a large picture; after other stages (a
 * blur, a resize) that pass would have to run them all again, so the picture is held whatever its
 * size (and the memory plan counts it).
 */
export function holdsPicture(plan: ProcessingPlan, index: number): boolean {
  const stage = plan.stages[index];
  return stage.kind === 'resize' && stage.smart !== null && (index > 0 || pixelsOf(stage.to) <= SMART_CROP_MAX_PIXELS);
}

/** Attention's copy of the held picture at ATTENTION_SIDE (smart-crop.ts), upright, and the resize to it. */
function attentionCopyBytes(picture: Dimensions): number {
  const side = { width: ATTENTION_SIDE, height: ATTENTION_SIDE };
  return 2 * pixelsOf(side) * 4 + resizeScratchBytesEither(picture, side);
}

/** The size a smart crop looks at: the resized picture (stored orientation), reduced to SMART_CROP_MAX_PIXELS. */
export function smartCropSize(resized: Dimensions): Dimensions {
  const factor = Math.min(1, Math.sqrt(SMART_CROP_MAX_PIXELS / pixelsOf(resized)));
  return { width: Math.max(1, Math.round(resized.width * factor)), height: Math.max(1, Math.round(resized.height * factor)) };
}

/**
 * The entropy pass's own buffers: the reduced picture it collects, its oriented copy and resize's
 * window (its decoder, reading at a larger or equal shrink, holds no more than the second pass's).
 * The attention pass holds a 32x32 picture and the window of a resize to it, less than the second
 * pass's resize.
 */
function entropyPassBytes(decoded: Dimensions, resized: Dimensions): number {
  const size = smartCropSize(resized);
  return 2 * pixelsOf(size) * 4 + resizeScratchBytesEither(decoded, size) + band(size.width);
}

/** What the encoder is told about its result. */
export function encodeFacts(plan: ProcessingPlan) {
  const { output, quality, grey, lowMemory, maxResultBytes, packedEncodeBytes } = plan;
  const orientation = plan.orientInEncoder ? plan.orientation : 1;
  return { output, quality, alpha: plan.alpha && !plan.flatten, grey, lowMemory, maxResultBytes, packedBytes: packedEncodeBytes, orientation };
}

/** A decoder that holds little while rows stream (baseline JPEG, lossy WebP) next to one holding the image. */
const STREAMING_DECODER_BYTES = 8 * MB;

/**
 * Above this predicted peak a run takes the encoder's low-memory mode: its normal mode (a JPEG's
 * optimised Huffman tables, libwebp's token buffer) is worth about 6% of the bytes or a third of
 * the time, not a run that takes more than half of a 128 MB isolate. It is also the most a 12 MP
 * run may hold (issue 19): a 12 MP PNG to JPEG with optimised tables is predicted at 70 MiB (its
 * 28 MB upload beside libjpeg's 36 MB of coefficients) and held 64.2. (The prediction is an upper
 * bound: a 12 MP photo to WebP is predicted at 57.5 MiB and holds 48.8.)
 */
const NORMAL_MODE_MAX_BYTES = 64 * MB;

/**
 * Within the budget, and within the line (NORMAL_MODE_MAX_BYTES) as a plain run of the same picture
 * and quality would be: what quality=auto adds (its sample, trials, the result it holds until it
 * is final, its check) comes on top of the modes a plain run takes, never makes them slower.
 */
function withinLine(plan: ProcessingPlan, budgetBytes: number): boolean {
  if (peakBytes(memoryPlan(plan)) > budgetBytes) return false;
  return peakBytes(memoryPlan(plan.auto ? { ...plan, auto: undefined } : plan)) <= Math.min(budgetBytes, NORMAL_MODE_MAX_BYTES);
}

/**
 * Least the low-memory mode must save to be taken beside another whole-image buffer: a thumbnail's
 * held picture (a smart crop's 600x400) or a small oriented frame is no reason to spend a third
 * more time (a 400x400 WebP: 17 ms in the normal mode, 29 in the low one), and the encoder's
 * normal mode then holds little more either.
 */
const LOW_MEMORY_MIN_SAVING_BYTES = 8 * MB;

/**
 * The encoder's normal mode unless another whole-image buffer is already held (a decoder that
 * keeps the image, an oriented frame) and the low-memory mode saves a worthwhile amount beside it,
 * or the run would be large (NORMAL_MODE_MAX_BYTES) or not fit the budget.
 */
export function chooseLowMemory(plan: ProcessingPlan, budgetBytes: number): boolean {
  const normal = memoryPlan({ ...plan, lowMemory: false });
  if (!withinLine({ ...plan, lowMemory: false }, budgetBytes)) return true;
  const holdsImageElsewhere = normal.frame > 0 || normal.decoder.streaming > STREAMING_DECODER_BYTES;
  return holdsImageElsewhere && peakBytes(normal) - peakBytes(memoryPlan({ ...plan, lowMemory: true })) >= LOW_MEMORY_MIN_SAVING_BYTES;
}

/**
 * The decoder's low-memory mode (a JPEG with several scans keeps its coefficients packed: a 12 MP
 * progressive photo's 36 MB in about 10, at 3-4% more time) where the run, with the encoder's
 * choice of mode, would be large (NORMAL_MODE_MAX_BYTES) or not fit the budget, and the mode
 * predicts less. Its prediction is a bound from the file's size, often above what the unpacked
 * buffer takes for a small file of high quality.
 */
export function chooseDecoderLowMemory(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const withEncoderMode = (p: ProcessingPlan) => withPackedEncode({ ...p, lowMemory: chooseLowMemory(p, budgetBytes) }, budgetBytes);
  const normal = withEncoderMode(plan);
  const normalPeak = peakBytes(memoryPlan(normal));
  const packs = plan.file.lowMemoryDecodeBytes;
  if (!packs || withinLine(normal, budgetBytes)) return normal;
  const low = withEncoderMode(withPackedBytes(plan, packs()));
  return peakBytes(memoryPlan(low)) < normalPeak ? fitDecoderToBudget(low, budgetBytes) : normal;
}

/**
 * Least allowance worth trying for a packed encoder buffer, in bytes a pixel of the result: the
 * packed values of JPEG's coefficients take 0.43-0.47 bytes a pixel of the 12 and 24 MP photos at
 * q80 and 0.66-0.70 at q95 (each block's mask and DC are counted apart); a picture that needs more
 * than its allowance is encoded again in the low-memory mode (pipeline.ts), which costs a second run.
 */
const PACKED_ENCODE_MIN_BYTES_PER_PIXEL = 0.5;

/**
 * Where the plan took the encoder's low-memory mode because the normal one would pass the line
 * (NORMAL_MODE_MAX_BYTES and the budget), and the format can pack the normal mode's buffer instead
 * (JPEG: optimised Huffman tables, 6% to 17% fewer bytes), the packed normal mode, allowed what
 * keeps the run within the line, if that is at least PACKED_ENCODE_MIN_BYTES_PER_PIXEL.
 */
function withPackedEncode(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  if (!plan.lowMemory || !FORMATS[plan.outputFormat].packsEncoderBuffer) return plan;
  if (withinLine({ ...plan, lowMemory: false }, budgetBytes)) return plan;
  const packed = (bytes: number): ProcessingPlan => ({ ...plan, lowMemory: false, packedEncodeBytes: bytes });
  const fits = (bytes: number) => withinLine(packed(bytes), budgetBytes);
  const pixels = pixelsOf(plan.output);
  if (!fits(Math.ceil(PACKED_ENCODE_MIN_BYTES_PER_PIXEL * pixels))) return plan;
  // Values can take at most 2 bytes for each of 64 coefficients of 1.5 blocks of 64 pixels (4:2:0).
  return packed(largestFitting(fits, 3 * pixels));
}

const withPackedBytes = (plan: ProcessingPlan, maxBytes: number): ProcessingPlan => ({ ...plan, decode: { ...plan.decode, lowMemory: { maxBytes } } });

/**
 * Where the low-memory decoder's worst case does not fit the budget, it is given what the budget
 * leaves instead, down to half that worst case (photos pack to about a third of it: a q90 24 MP
 * photo's 44 MiB worst case took 15); a file that turns out to need more fails.
 */
function fitDecoderToBudget(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const worst = plan.decode.lowMemory!.maxBytes;
  if (peakBytes(memoryPlan(plan)) <= budgetBytes) return plan;
  const fits = (maxBytes: number) => peakBytes(memoryPlan(withPackedBytes(plan, maxBytes))) <= budgetBytes;
  const cap = largestFitting(fits, worst);
  return cap >= worst / 2 && fits(cap) ? withPackedBytes(plan, cap) : plan;
}

/**
 * Left free where capped allowances can still give it: the packed coefficients of a progressive
 * JPEG and a PNG, WebP or AVIF result are allowed what the budget leaves, so such a run would be
 * planned at the whole budget, and small conversions (a 32x32 one to WebP, JPEG or PNG plans 2-3
 * MB) would wait seconds for it in the isolate's admission (src/admission) instead of running
 * beside it (measured: 3.5-4.8 s beside a 24 MP progressive JPEG to AVIF or WebP).
 */
const ROOM_BESIDE_CAPPED_RUN = 8 * MB;

/**
 * The plan's modes and caps for the budget (fitModes). A file whose decoder can hold a window of
 * rows instead of its whole picture (a large single AVIF frame) is decoded so where the whole
 * picture would leave less than ROOM_BESIDE_CAPPED_RUN free (a 24 MP frame resized held 95 of 100
 * MiB, and small conversions beside it waited 2 s; in a window, 28), the same pixels. A frame that
 * may use intra block copy needs its whole picture after all, so it is decoded in a window only
 * where the whole picture does not fit: if it does use it, it fails where it would not have run anyway.
 */
export function fitToBudget(unstriped: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const plan = withOrientStrips(unstriped, budgetBytes);
  const fitted = fitModes(plan, budgetBytes);
  if (!plan.file.decodesInWindow) return fitted;
  const roomWanted = plan.file.windowAlwaysSuffices ? ROOM_BESIDE_CAPPED_RUN : 0;
  if (budgetBytes - peakBytes(memoryPlan(fitted)) >= roomWanted) return fitted;
  const windowed = fitModes({ ...plan, decode: { ...plan.decode, rowWindow: true } }, budgetBytes);
  return peakBytes(memoryPlan(windowed)) < peakBytes(memoryPlan(fitted)) ? windowed : fitted;
}

/**
 * The decoder's and encoder's modes and the result's cap for the budget (chooseDecoderLowMemory,
 * fitResultToBudget), leaving ROOM_BESIDE_CAPPED_RUN free where the caps can still reach their
 * floors; a run that needs more is planned within the whole budget, as before.
 */
function fitModes(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const roomyBudget = budgetBytes - ROOM_BESIDE_CAPPED_RUN;
  const decoderFitted = (budget: number) => chooseDecoderLowMemory(plan, budget);
  // The decoder's allowance is fitted first and takes what it can: where that leaves the result
  // below its floor, the decoder keeps its whole-budget allowance and the result gives the room.
  // A result cap near its floor is near what detailed photos need (WebP's: 0.11 bytes a pixel),
  // so the room is not taken from it.
  const leavesResultRoom = (p: ProcessingPlan) => p.maxResultBytes === undefined || p.maxResultBytes >= 2 * resultFloorBytes(p);
  for (const roomy of [fitResultToBudget(decoderFitted(roomyBudget), roomyBudget), fitResultToBudget(decoderFitted(budgetBytes), roomyBudget)]) {
    if (peakBytes(memoryPlan(roomy)) <= roomyBudget && leavesResultRoom(roomy)) return roomy;
  }
  return fitResultToBudget(decoderFitted(budgetBytes), budgetBytes);
}

/**
 * A lossless result's size is unknown until it is made, and its bound (PNG: rows that do not
 * compress at all) is 1.3-2 times what photos come out at; a lossy WebP's bound (room in libwebp's
 * bit writers and the result for 1.6 times a detailed photo) is as far above what large photos
 * need. Where the bound would not fit the budget, the result is allowed what remains instead, down
 * to the format's floor (half the bound unless it says otherwise); a file that turns out larger
 * fails with FILE_TOO_LARGE or CONVERSION_FAILED (result-buffer.ts, the encoder's memory limit)
 * instead of the isolate running out of memory.
 */
export function fitResultToBudget(plan: ProcessingPlan, budgetBytes: number): ProcessingPlan {
  const format = FORMATS[plan.outputFormat];
  if (!format.resultMayBeCapped) return plan;
  if (peakBytes(memoryPlan(plan)) <= budgetBytes) return plan;
  const bound = format.resultBound(encodeFacts(plan));
  const fits = (maxResultBytes: number) => peakBytes(memoryPlan({ ...plan, maxResultBytes })) <= budgetBytes;
  // Searched rather than bound minus the excess: an encoder may also hold room for its result (libwebp).
  const cap = largestFitting(fits, bound);
  if (cap < resultFloorBytes(plan) || !fits(cap)) return plan;
  return { ...plan, maxResultBytes: cap };
}

/** The least a capped result is allowed: the format's floor share of its bound. */
function resultFloorBytes(plan: ProcessingPlan): number {
  const format = FORMATS[plan.outputFormat];
  return format.resultBound(encodeFacts({ ...plan, maxResultBytes: undefined })) * (format.resultCapFloor ?? 1 / 2);
}

const scale = ({ width, height }: Dimensions, factor: number): Dimensions => ({
  width: Math.max(1, Math.round(width * factor)),
  height: Math.max(1, Math.round(height * factor)),
});

/**
 * The same request with a result of about `pixels` pixels: its last resize (or, without one, a
 * resize after the leading crops, as a request for that size would plan it) and everything after
 * it scaled alike.
 */
export function withOutputPixels(plan: ProcessingPlan, pixels: number): ProcessingPlan {
  const factor = Math.sqrt(pixels / pixelsOf(plan.output));
  let stages = plan.stages;
  let from = stages.findLastIndex((stage) => stage.kind === 'resize');
  if (from < 0) {
    const whole = plan.decode.region ?? plan.stored;
    stages = [{ kind: 'resize', to: { width: whole.width, height: whole.height }, cut: null, pad: null, smart: null }, ...stages];
    from = 0;
  }
  stages = stages.map((stage, index) => (index < from ? stage : scaledStage(stage, factor)));
  const first = stages[0];
  if (from > 0 || plan.decode.region || first.kind !== 'resize') return withStages(plan, stages);
  // The first resize's new size may take another shrink-on-load.
  const shrink = shrinkOnLoad(plan.file.format.shrinkFactors, plan.stored, first.to);
  return withStages({ ...plan, decode: { ...plan.decode, shrink }, decoded: shrunkSize(plan.stored, shrink) }, stages);
}

/**
 * The same request on an input of about `pixels` pixels (file size, regions and results scaled
 * alike): a resize asks for its size, so from the first one on nothing changes.
 */
export function withInputPixels(plan: ProcessingPlan, pixels: number): ProcessingPlan {
  const factor = Math.sqrt(pixels / pixelsOf(plan.stored));
  const stored = scale(plan.stored, factor);
  const region: Region | null = plan.decode.region && { x: 0, y: 0, ...scale(plan.decode.region, factor) };
  const decoded = region ? { width: region.width, height: region.height } : shrunkSize(stored, plan.decode.shrink);
  const scaled = { ...plan, stored, decoded, decode: { ...plan.decode, region }, inputBytes: Math.round(plan.inputBytes * factor * factor) };
  const resize = plan.stages.findIndex((stage) => stage.kind === 'resize');
  return withStages(scaled, plan.stages.map((stage, index) => (resize >= 0 && index >= resize ? stage : scaledStage(stage, factor))));
}

const scaleRegion = (region: Region, factor: number): Region => ({ x: Math.round(region.x * factor), y: Math.round(region.y * factor), ...scale(region, factor) });

/** A stage's sizes and regions scaled by `factor` (withStages keeps them inside the picture). */
function scaledStage(stage: StagePlan, factor: number): StagePlan {
  if (stage.kind === 'crop') return { kind: 'crop', region: scaleRegion(stage.region, factor) };
  if (stage.kind !== 'resize') return stage;
  const { to, cut, pad, smart } = stage;
  return {
    kind: 'resize',
    to: scale(to, factor),
    cut: cut && scaleRegion(cut, factor),
    pad: pad && { ...pad, box: scale(pad.box, factor), at: scaleRegion(pad.at, factor) },
    smart: smart && { ...smart, box: scale(smart.box, factor) },
    shown: stage.shown,
  };
}

/** A region moved and shrunk as little as it takes to lie inside `size`. */
function inside(region: Region, size: Dimensions): Region {
  const width = Math.min(region.width, size.width);
  const height = Math.min(region.height, size.height);
  return { x: Math.min(region.x, size.width - width), y: Math.min(region.y, size.height - height), width, height };
}

/** `plan` with `stages`, their regions kept inside the picture as it stands, and the output they give. */
function withStages(plan: ProcessingPlan, stages: StagePlan[]): ProcessingPlan {
  let size = plan.decoded;
  const fitted = stages.map((stage): StagePlan => {
    let fitting = stage;
    if (stage.kind === 'crop') fitting = { kind: 'crop', region: inside(stage.region, size) };
    if (stage.kind === 'resize') {
      const cut = stage.cut && inside(stage.cut, stage.to);
      const box = stage.pad ? { width: Math.max(stage.pad.box.width, stage.to.width), height: Math.max(stage.pad.box.height, stage.to.height) } : null;
      const pad = stage.pad && { ...stage.pad, box: box!, at: inside({ ...stage.pad.at, width: stage.to.width, height: stage.to.height }, box!) };
      fitting = { ...stage, cut, pad };
    }
    size = sizeAfter(fitting, size);
    return fitting;
  });
  const output = displayedSize(size, plan.orientation);
  // quality=auto checks a result of another size another way (quality/auto-plan.ts).
  const auto = plan.auto && isAutoFormat(plan.outputFormat) ? autoPlanFor(output, plan.outputFormat, plan.auto.target, plan.auto.others) : undefined;
  return { ...plan, stages: fitted, output, auto };
}

export { MB };
