import type { ImageFormat } from './types';

/** A rectangle in pixel coordinates of the image as displayed (after EXIF orientation). */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every operation may also change the output format (decisions.md); absent = same as input. */
interface OutputOptions {
  format?: ImageFormat;
  /** 1..100, default 80; ignored for PNG. */
  quality: number;
}

export type Operation =
  | ({ kind: 'convert'; format: ImageFormat } & OutputOptions)
  | ({ kind: 'crop'; region: Region } & OutputOptions)
  | ({ kind: 'resize'; width?: number; height?: number; keepAspectRatio: boolean } & OutputOptions)
  | ({ kind: 'remove-metadata' } & OutputOptions);

export type OperationKind = Operation['kind'];

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
  admit?: (peakBytes: number) => Promise<() => void>;
  /** How the run shares the isolate's thread at its yield points (run-context.ts). */
  share?: CpuTurns;
}

/** What a run's yield points ask of the isolate: are others in it, and a turn for them. */
export interface CpuTurns {
  contended(): boolean;
  /** Resolves when the run may go on: the event loop has turned, and others had their go. */
  turn(): Promise<void>;
}

/** A run's result, written into its sink. */
export interface ProcessedResult {
  /** The file's length in bytes. */
  size: number;
  format: ImageFormat;
  /** Size as a viewer shows it (after EXIF orientation). */
  width: number;
  height: number;
  /** Bytes the run held at its fullest: buffers plus codec memories (memory-meter.ts). */
  peakBytes: number;
  /** What the memory guard predicted for it from the header (memory-plan.ts); never below peakBytes. */
  plannedPeakBytes: number;
}

/** A run's result kept in memory. */
export interface ProcessedImage extends ProcessedResult {
  bytes: Uint8Array;
}

export const DEFAULT_QUALITY = 80;
