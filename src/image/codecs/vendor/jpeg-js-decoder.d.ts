export interface DecodedComponents {
  width: number;
  height: number;
  /** 1 (grey), 3 (RGB after YCbCr) or 4 (C, M, Y, K ink amounts after undoing Adobe's inversion and YCCK). */
  components: number;
  /** width * height * components bytes, interleaved, row-major. */
  data: Uint8Array;
}

export interface DecodeOptions {
  /** Force (true) or forbid (false) the YCbCr/YCCK transform; by default the Adobe marker decides. */
  colorTransform?: boolean;
  /** Skip blocks that lie outside the component's block grid instead of throwing. Default true. */
  tolerantDecoding?: boolean;
  /** Refuse frames with more pixels than this. Default 100. */
  maxResolutionInMP?: number;
  /** Refuse files whose decode would allocate more than this. Default 512. */
  maxMemoryUsageInMB?: number;
}

/** Throws (plain Error, or TypeError on some malformed input) on anything it cannot decode. */
export function decodeJpegComponents(jpegData: Uint8Array, options?: DecodeOptions): DecodedComponents;
