import { damaged } from '../../bytes';
import type { Region } from '../../operations';
import type { Band, DecodeOptions, RowSource } from '../../stages/rows';
import type { JpegFrame } from './header';
import { cString, HEADER, openLibjpeg, outOfMemory, statusError } from './libjpeg';
import { decoderLibjpegBytes, JPEG_BAND_ROWS, JPEG_MAX_BLOCK_PASSES, JPEG_MAX_SCANS } from './memory';

/**
 * JPEG decoding in bands on our build of libjpeg-turbo: the decoder pulls the file in 16 KB chunks
 * and hands out 16-row bands from a buffer inside the WebAssembly memory, at 1/1, 1/2, 1/4 or 1/8
 * scale (libjpeg's DCT scaling) or only a window of the image. It holds no frame: a baseline 12 MP
 * decode runs in about 1 MB of WebAssembly memory (memory.ts has the cost of every case).
 */

/** libjpeg's DCT scaling: 1/1, 1/2, 1/4 and 1/8 while decoding (shrink-on-load). */
export const JPEG_SHRINK_FACTORS = [1, 2, 4, 8] as const;

/** Size of a decode at 1/shrink, as libjpeg rounds: ceil(side / shrink). */
export function scaledSize(side: number, shrink: number): number {
  return Math.ceil(side / shrink);
}

/** What a band decode tells besides its bands (for the memory plan's checks, tests and the benchmark). */
export interface JpegDecodeInfo {
  frame: JpegFrame;
  /** The most bytes libjpeg held at once so far (its allocations, not the band buffers); kept after close. */
  libjpegPeakBytes(): number;
  /** Size of the WebAssembly memory now. */
  wasmBytes(): number;
}

function checkWindow(frame: JpegFrame, { shrink, region }: DecodeOptions): Region {
  if (!(JPEG_SHRINK_FACTORS as readonly number[]).includes(shrink)) throw new Error(`jpeg: shrink ${shrink} is not one of ${JPEG_SHRINK_FACTORS}`);
  const width = scaledSize(frame.width, shrink);
  const height = scaledSize(frame.height, shrink);
  if (!region) return { x: 0, y: 0, width, height };
  const { x, y } = region;
  if (!(x >= 0 && y >= 0 && region.width >= 1 && region.height >= 1 && x + region.width <= width && y + region.height <= height)) {
    throw new Error(`jpeg: region ${JSON.stringify(region)} is outside the ${width}x${height} image`);
  }
  return region;
}

/**
 * Opens a band decode of `input`, whose frame header the header reader has read: libjpeg may
 * allocate no more than `libjpegBytes` (by default decoderLibjpegBytes, its need for this header), so a file whose scans ask for more than its header promised fails instead of
 * growing the memory; over the limit is CONVERSION_FAILED. libjpeg's header must agree with ours.
 * A progressive file is read whole (its coefficients) before this returns.
 */
export async function openJpegDecode(input: Uint8Array, frame: JpegFrame, options: DecodeOptions, libjpegBytes?: number): Promise<RowSource & JpegDecodeInfo> {
  const window = checkWindow(frame, options);
  const memoryLimit = libjpegBytes ?? decoderLibjpegBytes(frame, options.shrink, options.lowMemory?.maxBytes);
  let position = 0;
  const wasm = await openLibjpeg('jpeg-decoder', {
    jpegReadInput(view: Uint8Array): number {
      const count = Math.min(view.length, input.length - position);
      view.set(input.subarray(position, position + count));
      position += count;
      return count;
    },
    jpegSkipInput(count: number): void {
      position = Math.min(input.length, position + count);
    },
  });
  const lib = wasm.instance;
  let decoder = 0;
  let y = 0;
  let libjpegPeak = 0;
  const close = () => {
    if (decoder) {
      libjpegPeak = lib._decoder_memory_peak(decoder);
      lib._decoder_destroy(decoder);
    }
    decoder = 0;
    wasm.release();
  };
  const check = (status: number, what: string) => {
    if (status >= 0) return status;
    const error = statusError(status, cString(lib, lib._decoder_message(decoder)), what);
    close();
    throw error;
  };
  try {
    decoder = lib._decoder_create(memoryLimit, JPEG_MAX_SCANS, JPEG_MAX_BLOCK_PASSES);
    if (!decoder) throw outOfMemory('libjpeg decoder_create');
    check(lib._decoder_read_header(decoder), 'read_header');
    const header = new Int32Array(lib.HEAPU8.buffer, lib._decoder_header(decoder), HEADER.fields);
    const sampling = frame.sampling.map((_, c) => ({ h: header[HEADER.h0 + c], v: header[HEADER.v0 + c] }));
    const libjpegFrame = { width: header[HEADER.width], height: header[HEADER.height], components: header[HEADER.components], sampling, multiScan: header[HEADER.multiScan] === 1 };
    const ours = { width: frame.width, height: frame.height, components: frame.components, sampling: frame.sampling, multiScan: frame.multiScan };
    // The memory limit was computed from our reading; libjpeg must have read the same frame.
    if (JSON.stringify(libjpegFrame) !== JSON.stringify(ours)) throw damaged(`jpeg: libjpeg reads the frame as ${JSON.stringify(libjpegFrame)}, the header reader as ${JSON.stringify(ours)}`);
    // Reads every scan of a multi-scan file (0.4 s for a 12 MP progressive photo), letting other runs go on meanwhile.
    const started = await wasm.callYielding(lib._decoder_start_entry(), decoder, options.shrink, window.x, window.y, window.width, window.height, JPEG_BAND_ROWS);
    check(started, 'start');
  } catch (error) {
    close();
    throw error;
  }
  const { width, height } = window;
  return {
    width,
    height,
    model: frame.components === 4 ? 'cmyk' : 'rgba',
    alpha: false,
    grey: frame.components === 1,
    frame,
    async read(): Promise<Band | null> {
      if (!decoder || y >= height) {
        close();
        return null;
      }
      const rows = check(lib._decoder_read(decoder, JPEG_BAND_ROWS), 'read');
      if (rows === 0) {
        close();
        throw new Error('libjpeg decoder_read gave no rows before the end of the window');
      }
      const pointer = lib._decoder_band(decoder);
      const band = { y, rows, data: lib.HEAPU8.subarray(pointer, pointer + rows * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => 0,
    close,
    libjpegPeakBytes: () => (decoder ? lib._decoder_memory_peak(decoder) : libjpegPeak),
    wasmBytes: () => wasm.usedBytes(),
  };
}

