import type { ImageFormat } from './types';

/** A rectangle in pixel coordinates of the image as displayed (after EXIF orientation). */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An sRGB colour with straight (not premultiplied) alpha, each 0..255. */
export interface Colour {
  r: number;
  g: number;
  b: number;
  a: number;
}

export const WHITE: Colour = { r: 255, g: 255, b: 255, a: 255 };

/**
 * Every operation may also change the output format (decisions.md); absent = same as input.
 * `best`: the smallest of WebP, AVIF and JPEG (JPEG only where the result is opaque) at quality=auto.
 */
interface OutputOptions {
  format?: ImageFormat | 'best';
  /**
   * 1..100, default 80 (`auto` with format=best); ignored for PNG. `auto`: the lowest quality whose
   * result scores at least `qualityTarget` on SSIMULACRA 2 against the pixels that went into the
   * encoder (src/image/quality).
   */
  quality?: number | 'auto';
  /** With quality=auto: the score to reach (QUALITY_TARGET_RANGE); the format's calibrated default when absent. */
  qualityTarget?: number;
  /**
   * What transparency is flattened onto where the output has no alpha (its alpha ignored), and the
   * padding of `contain`. Default white.
   */
  background?: Colour;
}

/** How the picture fills a width x height box (sharp's `fit`). */
export type Fit = 'inside' | 'cover' | 'contain' | 'fill' | 'outside';

export const GRAVITIES = ['center', 'north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'] as const;
export type Gravity = (typeof GRAVITIES)[number];

/** Which part of the picture `cover` keeps, or where `contain` places it in the box. */
export type Position =
  | { kind: 'gravity'; gravity: Gravity }
  /** libvips' smartcrop: cut the strips of least entropy, or centre on the most interesting spot. */
  | { kind: 'smart'; strategy: 'entropy' | 'attention' }
  /** A point given in fractions (0..1) of the picture's width and height, kept as near the centre as the box allows. */
  | { kind: 'focal'; x: number; y: number };

export const CENTER: Position = { kind: 'gravity', gravity: 'center' };

export interface ResizeOptions {
  width?: number;
  height?: number;
  /** Used where `fit` is absent: true (the default) is `inside`, false is `fill` (the contract's parameter). */
  keepAspectRatio?: boolean;
  fit?: Fit;
  /** Default center. */
  position?: Position;
}

/** The steps a transform can chain, each on the picture as it stands after the steps before it. */
export const STEP_OPS = ['crop', 'resize', 'rotate', 'flip', 'blur', 'sharpen', 'grayscale'] as const;
export type StepOp = (typeof STEP_OPS)[number];

/** sharp's ranges: blur(sigma) takes 0.3-1000, sharpen({ sigma }) is used with 0.5-10. */
export const BLUR_SIGMA = { min: 0.3, max: 1000 } as const;
export const SHARPEN_SIGMA = { min: 0.5, max: 10 } as const;
export const MAX_STEPS = 10;

/**
 * One step of a transform (the `steps` of POST /transform; the other endpoints are one-step
 * transforms). Coordinates and sizes are in the picture as it stands at that step: after the
 * EXIF orientation and every step before it.
 */
export type Step =
  | ({ op: 'crop' } & Region)
  | ({ op: 'resize' } & ResizeOptions)
  /** Clockwise. */
  | { op: 'rotate'; angle: 90 | 180 | 270 }
  /** horizontal: mirrored left to right (sharp's flop); vertical: upside down (sharp's flip). */
  | { op: 'flip'; axis: 'horizontal' | 'vertical' }
  /** Gaussian, as sharp's blur(sigma). */
  | { op: 'blur'; sigma: number }
  /** Unsharp mask on lightness, as sharp's sharpen({ sigma }) with its other defaults. */
  | { op: 'sharpen'; sigma: number }
  /** Luminance, as sharp's greyscale(). */
  | { op: 'grayscale' }
  /**
   * remove-metadata's one step: where nothing else changes the pixels and the format stays, the
   * file is stripped without re-encoding; a re-encoded result carries no metadata anyway.
   */
  | { op: 'remove-metadata' };

/** A run: its steps in order, then the output. */
export interface Transform extends OutputOptions {
  steps: readonly Step[];
  /**
   * How errors name a step's fields: `steps[2].sigma` (the default), or the field alone where the
   * one step's fields are the request's own (crop, resize).
   */
  fieldNames?: 'steps' | 'form';
}

/** The processing calls by name (what a result record says made it). */
export type OperationKind = 'convert' | 'crop' | 'resize' | 'remove-metadata' | 'transform';

export interface PixelLimits {
  maxInputPixels: number;
  maxOutputPixels: number;
  /** Most bytes one pipeline run may hold (memory-plan.ts); larger requests are refused up front. */
  memoryBudgetBytes: number;
}

/** How a run fits in beside others in its isolate (the caller's concern, not the image code's). */
export interface RunOptions {
  /**
   * Called with the run's predicted peak once it is planned, before anything is decoded; resolves
   * when the run may start (admission by memory) with the function that releases it.
   */
  admit?: (peakBytes: number, estimatedWorkMs: number) => Promise<() => void>;
  /** How the run shares the isolate's thread at its yield points (run-context.ts). */
  share?: CpuTurns;
  /** Time each stage (stage-profile.ts): ProcessedImage.stagesMs. */
  profile?: boolean;
}

/** What a run's yield points ask of the isolate: are others in it, and a turn for them. */
export interface CpuTurns {
  contended(): boolean;
  /**
   * Resolves when the run may go on: the event loop has turned `passes` times (default 1) unless a
   * request came in meanwhile, and others had their go; `sliceMs` is the estimated work since the last turn.
   */
  turn(passes?: number, sliceMs?: number): Promise<void>;
  /** How much work (ns) to do before the next turn, where the share decides it (run-context.ts has the defaults). */
  sliceNs?(): number;
}

/** What quality=auto measured of the result it kept (SSIMULACRA 2: 100 is identical, 90 visually lossless). */
export interface QualityScore {
  metric: 'ssimulacra2';
  value: number;
  /** The score it was asked to reach. */
  target: number;
  /**
   * `picture`: the whole result decoded, against the encoder's whole input; `sample`: the sample's
   * tiles (pictures too large to score whole in the time auto may take).
   */
  measuredOn: 'picture' | 'sample';
}

/** A run's result, written into its sink. */
export interface ProcessedResult {
  /** The file's length in bytes. */
  size: number;
  format: ImageFormat;
  /** The encoder's quality, for JPEG, WebP and AVIF results (not PNG, nor a lossless strip). */
  quality?: number;
  /** quality=auto's measurement of the result. */
  score?: QualityScore;
  /** Size as a viewer shows it (after EXIF orientation). */
  width: number;
  height: number;
  /** Bytes the run held at its fullest: buffers plus codec memories (memory-meter.ts). */
  peakBytes: number;
  /** What the memory guard predicted for it from the header (memory-plan.ts); never below peakBytes. */
  plannedPeakBytes: number;
  /** With RunOptions.profile: milliseconds per stage (stage-profile.ts). */
  stagesMs?: Record<string, number>;
}

/** A run's result kept in memory. */
export interface ProcessedImage extends ProcessedResult {
  bytes: Uint8Array;
}

export const DEFAULT_QUALITY = 80;
