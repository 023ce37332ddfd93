import { damaged } from '../../bytes';
import { cropRows } from '../../stages/crop';
import type { Band, DecodeOptions, RowSource } from '../../stages/rows';
import { placeRowsOnCanvas, stillOf } from './first-frame';
import type { WebpHeader, WebpStream } from './header';
import { heap, openLibwebp, outOfMemory, statusError } from './libwebp';
import { WEBP_BAND_ROWS, webpDecoderLimitBytes } from './memory';

/**
 * WebP decoding in bands on our build of libwebp (codecs/webp/decoder.c): the file is copied into
 * the instance once, and rows come out as libwebp's WebPDecodeRGBA would write them (fancy
 * upsampling, straight alpha) without an output frame. A lossy file needs a few rows of state
 * (plus 1 byte a pixel for an alpha plane), a lossless one its whole ARGB image (4 bytes a pixel,
 * inherent to the format); libwebp-memory.ts has the cost of every case. An animation is decoded
 * as its first frame on its canvas (decisions.md).
 */

/** Fields of decoder_info (enum info_field in decoder.c). */
const INFO = { width: 0, height: 1, hasAlpha: 2, lossless: 3, animation: 4, fields: 5 } as const;

/** The bitstream's features as libwebp reads them (WebPGetFeatures). */
export interface WebpFeatures extends WebpStream {
  animation: boolean;
}

/** A band decode of one still WebP bitstream (no animation), full size. */
async function openStill(input: Uint8Array, bandRows: number): Promise<RowSource & { features: WebpFeatures }> {
  const wasm = await openLibwebp('webp-decoder');
  const lib = wasm.instance;
  let decoder = 0;
  const close = () => {
    if (decoder) lib._decoder_destroy(decoder);
    decoder = 0;
    wasm.release();
  };
  const check = (status: number, what: string) => {
    if (status >= 0) return status;
    close();
    throw statusError(status, what, true);
  };
  let features: WebpFeatures;
  try {
    decoder = lib._decoder_create(input.length);
    if (!decoder) throw outOfMemory('libwebp decoder_create');
    heap(wasm).set(input, lib._decoder_input(decoder));
    check(lib._decoder_read_header(decoder), 'read_header');
    const info = new Int32Array(wasm.memory.buffer, lib._decoder_info(decoder), INFO.fields);
    features = {
      width: info[INFO.width],
      height: info[INFO.height],
      // A lossless stream's alpha_is_used bit is only a hint: libwebp decodes whatever alpha the
      // pixels carry (bad_palette_index.webp says "no alpha" and decodes to transparent black).
      alpha: info[INFO.hasAlpha] === 1 || info[INFO.lossless] === 1,
      lossless: info[INFO.lossless] === 1,
      animation: info[INFO.animation] === 1,
      inputBytes: input.length,
    };
    // The header reader found no animation chunks; a VP8X whose flag says otherwise is damaged (libwebp would read it as one).
    if (features.animation) throw damaged('webp: VP8X declares an animation that the file does not hold');
    // libwebp may take what its header promises and no more (a lossless file can ask for much more).
    lib._codec_memory_set_limit(webpDecoderLimitBytes(features, bandRows));
    check(lib._decoder_start(decoder, bandRows), 'start');
  } catch (error) {
    close();
    throw error;
  }
  const { width, height } = features;
  const rowBytes = width * 4;
  // The rows of the last decoder_read, inside the instance's memory, and how many were handed out.
  let pending: Uint8Array = new Uint8Array(0);
  let y = 0;
  return {
    width,
    height,
    model: 'rgba',
    alpha: features.alpha,
    grey: false,
    features,
    async read(): Promise<Band | null> {
      if (!decoder || y >= height) {
        close();
        return null;
      }
      if (pending.length === 0) {
        const rows = check(lib._decoder_read(decoder, bandRows), 'read');
        if (rows === 0) {
          close();
          throw damaged('webp: libwebp produced fewer rows than the image has');
        }
        const at = lib._decoder_rows(decoder);
        pending = heap(wasm).subarray(at, at + rows * rowBytes);
      }
      const rows = Math.min(bandRows, pending.length / rowBytes, height - y);
      const band = { y, rows, data: pending.subarray(0, rows * rowBytes) };
      pending = pending.subarray(rows * rowBytes);
      y += rows;
      return band;
    },
    // The bands are views of the instance's memory, which codecs/wasm-memory.ts counts.
    heldBytes: () => 0,
    close,
  };
}

/**
 * Opens a band decode of `input` (a still or animated WebP whose header the pipeline has checked),
 * of the whole image or exactly `options.region`, in bands of at most `bandRows` rows. Damage is
 * UNSUPPORTED_FORMAT, here or while reading rows; running out of memory is CONVERSION_FAILED.
 */
export async function openWebpDecode(input: Uint8Array, header: WebpHeader, options: DecodeOptions, bandRows = WEBP_BAND_ROWS): Promise<RowSource> {
  if (options.shrink !== 1) throw new Error(`webp: shrink ${options.shrink} is not one of [1]`);
  const { animation } = header;
  let source: RowSource;
  if (animation) {
    const frame = await openStill(stillOf(input, animation), bandRows);
    source = placeRowsOnCanvas(frame, animation.canvas, animation.frame, bandRows);
  } else {
    source = await openStill(input, bandRows);
  }
  if (!options.region) return source;
  // Rows above the region are decoded and dropped (a WebP cannot be entered midway).
  const { x, y, width, height } = options.region;
  if (!(x >= 0 && y >= 0 && width >= 1 && height >= 1 && x + width <= source.width && y + height <= source.height)) {
    source.close();
    throw new Error(`webp: region ${JSON.stringify(options.region)} is outside the ${source.width}x${source.height} image`);
  }
  return cropRows(source, options.region);
}
