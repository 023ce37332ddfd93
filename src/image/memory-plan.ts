import type { Dimensions } from './types';

/*
 * How many bytes one pipeline run will hold at its fullest, predicted from the header before
 * anything is decoded, so a request that cannot fit a Worker's memory is refused up front instead
 * of killing the isolate (a deployed isolate has 128 MB and local workerd enforces nothing).
 *
 * Rows stream from the decoder through the stages to the encoder, so while they stream everything
 * is alive at once: the input, the decoder (its WebAssembly memory and band), the stages' row
 * windows and the encoder (its memory and the output so far). Two things split a run into phases:
 * a whole frame that must be complete before the next step can start (an orientation that reverses
 * or transposes rows for an encoder that writes top to bottom, or a frame collected for a codec
 * that only encodes whole frames), and a decoder that decodes everything when it is opened.
 *
 * Each format states its own costs (formats/<format>/memory.ts, from measurements of our builds, as upper bounds);
 * test/workers/memory-budget.test.ts runs the real pipeline and checks that it never holds more
 * than predicted.
 */

export const MB = 1 << 20;

export interface DecoderCost {
  /** Bytes held while opening: a decoder that decodes whole frames reaches its peak there. */
  open: number;
  /** Bytes held while rows stream out: WebAssembly memory, band buffers, a held frame. */
  streaming: number;
}

export interface EncoderCost {
  /** Bytes held while rows stream in: WebAssembly memory and buffers (the result is counted apart). */
  streaming: number;
  /**
   * Most bytes the encoder writes into its result sink between two of its drains: a few rows'
   * worth for one that writes as rows come, the whole file for one that writes it in one call.
   */
  burstBytes: number;
  /**
   * Bytes held once every row has arrived, the decoder and stages done, where the encoder then
   * does its main work on a picture it has collected (libwebp); `streaming` holds until the end otherwise.
   */
  finishing?: number;
}

export interface MemoryPlan {
  /** The upload's bytes, held from start to end. */
  inputBytes: number;
  decoder: DecoderCost;
  /** Row windows and bands of the stages between decoder and encoder (crop, resize, orientation). */
  stages: number;
  /** A whole frame between decoder and encoder (the oriented frame), 0 if none. */
  frame: number;
  /**
   * The frame is one strip of the result at a time (plan.ts withOrientStrips): the encoder, open
   * from the first strip, is alive while the next ones are decoded.
   */
  frameInStrips?: boolean;
  /** Stages that run after a held picture is complete (what follows a smart crop's cut), beside the encoder. */
  afterFrame?: number;
  /** The encoder with what its result sink holds (beside its main work, for one that has `finishing`). */
  encoder: { streaming: number; finishing?: number };
  /**
   * quality=auto (quality/auto-plan.ts): what it holds beside every pass (the sample, results kept),
   * and its own phases, the trials on the sample and the check of a result, each beside the input.
   */
  auto?: { beside: number; trials: number; check: number };
  /** The input is let go once every row is decoded (plan.ts releasesInput): the encoder's finishing work is counted without it. */
  releasesInput?: boolean;
}

export type Phase = 'decode' | 'stream' | 'encode' | 'trials' | 'check';

/** Bytes held at the fullest moment of each phase; the run's peak is the largest. */
export function phasePeaks(plan: MemoryPlan): Record<Phase, number> {
  const { inputBytes, decoder, stages, frame, encoder, auto } = plan;
  const splitsRun = frame > 0 && !plan.frameInStrips;
  const held = inputBytes + (auto?.beside ?? 0);
  return {
    decode: held + decoder.open,
    // The encoder starts as soon as rows arrive, unless a frame has to be complete first.
    stream: held + decoder.streaming + stages + frame + (splitsRun ? 0 : encoder.streaming),
    encode: Math.max(held + frame + (plan.afterFrame ?? 0) + encoder.streaming, (plan.releasesInput ? held - inputBytes : held) + frame + (plan.afterFrame ?? 0) + (encoder.finishing ?? 0)),
    trials: auto ? held + auto.trials : 0,
    check: auto ? held + auto.check : 0,
  };
}

export function peakBytes(plan: MemoryPlan): number {
  const peaks = phasePeaks(plan);
  return Math.max(peaks.decode, peaks.stream, peaks.encode);
}

/**
 * The largest pixel count for which `fits(pixels)` holds, for a monotone `fits`: the limits the
 * README and error messages state are derived from the same model as the check itself.
 */
export function largestFitting(fits: (pixels: number) => boolean, ceiling = 1e9): number {
  if (!fits(1)) return 0;
  let low = 1;
  let high = ceiling;
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}

export const pixelsOf = ({ width, height }: Dimensions) => width * height;
