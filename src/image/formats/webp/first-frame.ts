import { concat, damaged, startsWith, u24le, u8 } from '../../bytes';
import { readWebpDimensions, riffHeader, webpChunk, webpChunks, type WebpChunk } from './header';
import type { Band, RowSource } from '../../stages/rows';
import type { Dimensions, RgbaImage } from '../../types';

/**
 * decisions.md: an animated WebP is processed as its first frame. libwebp's still-image decoder
 * (the one @jsquash/webp wraps) refuses animations, so the first ANMF frame's bitstream is
 * re-wrapped as a standalone still WebP, decoded as usual and placed on the animation canvas.
 */

const ANIMATION_FLAG = 0x02;
const ALPHA_FLAG = 0x10;
/** ANMF payload: X/2, Y/2, width-1, height-1, duration (24-bit each), flags byte; frame data follows. */
const ANMF_HEADER = 16;

export interface FrameRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface FirstFrame {
  /** A still RIFF/WEBP file holding the first frame's bitstream (and its ALPH chunk, if any). */
  still: Uint8Array;
  /** Animation canvas size (VP8X), the size of the processed image. */
  canvas: Dimensions;
  /** Where the first frame lies on the canvas; its size is also the still's size. */
  frame: FrameRect;
}

/** True for a RIFF/WEBP file whose first chunk is VP8X with the animation flag set. */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  return startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBP') && startsWith(bytes, 12, 'VP8X') && bytes.length > 20 && (u8(bytes, 20) & ANIMATION_FLAG) !== 0;
}

/**
 * The first frame of an animated WebP as a standalone still, or null if the file is not animated
 * (the still decoder then handles it, damage included). Damage in the animation header or the first
 * frame throws `damaged`; chunks after the first ANMF are not read. The still's bitstream must
 * declare exactly the frame size, which lies inside the canvas, so decoding it allocates no more
 * than the canvas the header guard has already checked. Allocations are bounded by the input length.
 */
export function firstFrameAsStill(bytes: Uint8Array): FirstFrame | null {
  if (!isAnimatedWebp(bytes)) return null;
  const canvas = readWebpDimensions(bytes); // the VP8X canvas, as the pipeline's guard read it
  let animation = false;
  let first = true;
  for (const chunk of webpChunks(bytes)) {
    if (first) {
      first = false; // the VP8X read above
      continue;
    }
    switch (chunk.type) {
      case 'ANIM':
        if (chunk.length < 6) throw damaged('webp: short ANIM');
        animation = true;
        break;
      case 'ANMF':
        if (!animation) throw damaged('webp: ANMF before ANIM');
        return firstFrame(bytes, chunk, canvas);
      case 'VP8X':
      case 'VP8 ':
      case 'VP8L':
      case 'ALPH':
        throw damaged(`webp: ${JSON.stringify(chunk.type)} outside a frame of an animation`);
      default:
        break; // ICCP, EXIF, XMP, unknown chunks
    }
  }
  throw damaged('webp: animation without frames');
}

function firstFrame(bytes: Uint8Array, anmf: WebpChunk, canvas: Dimensions): FirstFrame {
  if (anmf.length < ANMF_HEADER) throw damaged('webp: short ANMF');
  const at = anmf.data;
  const frame: FrameRect = {
    x: u24le(bytes, at) * 2,
    y: u24le(bytes, at + 3) * 2,
    width: u24le(bytes, at + 6) + 1,
    height: u24le(bytes, at + 9) + 1,
  };
  if (frame.x + frame.width > canvas.width || frame.y + frame.height > canvas.height) {
    throw damaged(`webp: first frame ${frame.width}x${frame.height} at ${frame.x},${frame.y} outside the ${canvas.width}x${canvas.height} canvas`);
  }

  // The frame data is a chunk list like a RIFF payload: wrap it so `webpChunks` can walk it.
  const data = bytes.subarray(at + ANMF_HEADER, at + anmf.length);
  const frameFile = concat([riffHeader(4 + data.length), data]);
  let alpha: WebpChunk | null = null;
  let bitstream: WebpChunk | null = null;
  for (const chunk of webpChunks(frameFile)) {
    if (chunk.type === 'ALPH') {
      alpha ??= chunk; // libwebp uses the first one
    } else if (chunk.type === 'VP8 ' || chunk.type === 'VP8L') {
      bitstream = chunk;
      break; // anything after the bitstream is unknown chunks
    } else if (chunk.type === 'VP8X' || chunk.type === 'ANIM' || chunk.type === 'ANMF') {
      throw damaged(`webp: ${JSON.stringify(chunk.type)} inside a frame`);
    }
  }
  if (!bitstream) throw damaged('webp: first frame without a bitstream');
  if (alpha && bitstream.type === 'VP8L') throw damaged('webp: ALPH with a VP8L frame');

  const payload = (chunk: WebpChunk) => frameFile.subarray(chunk.data, chunk.data + chunk.length);
  const image = webpChunk(bitstream.type, payload(bitstream));
  const plain = concat([riffHeader(4 + image.length), image]);
  const size = readWebpDimensions(plain);
  if (size.width !== frame.width || size.height !== frame.height) {
    throw damaged(`webp: first frame is ${frame.width}x${frame.height} but its bitstream ${size.width}x${size.height}`);
  }
  if (!alpha) return { still: plain, canvas, frame };

  const vp8x = new Uint8Array(10);
  vp8x[0] = ALPHA_FLAG;
  setU24le(vp8x, 4, frame.width - 1);
  setU24le(vp8x, 7, frame.height - 1);
  const body = concat([webpChunk('VP8X', vp8x), webpChunk('ALPH', payload(alpha)), image]);
  return { still: concat([riffHeader(4 + body.length), body]), canvas, frame };
}

/**
 * The decoded first frame placed at `at` on a transparent canvas (libwebp's animation decoder starts
 * from a transparent canvas, so blending the first frame onto it leaves the frame's pixels as they
 * are). A frame that covers the whole canvas is returned unchanged. The canvas size must have passed
 * the pixel-limit guard: it is allocated here.
 */
export function placeOnCanvas(frame: RgbaImage, canvas: Dimensions, at: { x: number; y: number }): RgbaImage {
  const { width, height } = frame;
  if (frame.data.length !== width * height * 4) throw damaged(`webp: frame pixels ${frame.data.length} for ${width}x${height}`);
  if (at.x < 0 || at.y < 0 || at.x + width > canvas.width || at.y + height > canvas.height) {
    throw damaged(`webp: frame ${width}x${height} at ${at.x},${at.y} outside the ${canvas.width}x${canvas.height} canvas`);
  }
  if (at.x === 0 && at.y === 0 && width === canvas.width && height === canvas.height) return frame;
  const data = new Uint8Array(canvas.width * canvas.height * 4);
  const row = width * 4;
  for (let y = 0; y < height; y++) {
    data.set(frame.data.subarray(y * row, (y + 1) * row), ((at.y + y) * canvas.width + at.x) * 4);
  }
  return { data, width: canvas.width, height: canvas.height };
}



function setU24le(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value & 0xff;
  bytes[offset + 1] = (value >> 8) & 0xff;
  bytes[offset + 2] = (value >> 16) & 0xff;
}

/**
 * The band version of placeOnCanvas: the bands of the decoded first frame placed at `at` on a
 * transparent canvas, in bands of at most `bandRows` canvas rows. Holds one band of canvas width;
 * a frame covering the whole canvas is returned unchanged.
 */
export function placeRowsOnCanvas(frame: RowSource, canvas: Dimensions, at: { x: number; y: number }, bandRows: number): RowSource {
  const { width, height } = frame;
  if (at.x < 0 || at.y < 0 || at.x + width > canvas.width || at.y + height > canvas.height) {
    frame.close();
    throw damaged(`webp: frame ${width}x${height} at ${at.x},${at.y} outside the ${canvas.width}x${canvas.height} canvas`);
  }
  if (at.x === 0 && at.y === 0 && width === canvas.width && height === canvas.height) return frame;
  const rowBytes = canvas.width * 4;
  const buffer = new Uint8Array(Math.min(bandRows, canvas.height) * rowBytes);
  let pending: Band | null = null;
  let used = 0; // rows of `pending` already placed
  let y = 0;
  const close = () => frame.close();
  return {
    width: canvas.width,
    height: canvas.height,
    model: frame.model,
    alpha: true,
    grey: false,
    async read(): Promise<Band | null> {
      if (y >= canvas.height) {
        close();
        return null;
      }
      // Transparent rows above and below the frame; inside it, the frame's rows at x.
      const inside = y >= at.y && y < at.y + height;
      const limit = inside ? at.y + height : y < at.y ? at.y : canvas.height;
      let rows = Math.min(bandRows, limit - y);
      buffer.fill(0, 0, rows * rowBytes);
      if (inside) {
        if (pending === null || used >= pending.rows) {
          pending = await frame.read();
          used = 0;
          if (pending === null) throw damaged(`webp: first frame ended before row ${y - at.y}`);
        }
        rows = Math.min(rows, pending.rows - used);
        for (let r = 0; r < rows; r++) {
          const from = pending.data.subarray((used + r) * width * 4, (used + r + 1) * width * 4);
          buffer.set(from, r * rowBytes + at.x * 4);
        }
        used += rows;
      }
      const band = { y, rows, data: buffer.subarray(0, rows * rowBytes) };
      y += rows;
      return band;
    },
    heldBytes: () => buffer.byteLength + frame.heldBytes(),
    close,
  };
}
