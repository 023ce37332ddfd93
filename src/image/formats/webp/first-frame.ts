import { concat, damaged } from '../../bytes';
import type { Band, RowSource } from '../../stages/rows';
import type { Dimensions } from '../../types';
import { ALPHA_FLAG, type FirstFrame } from './header';
import { riffHeader, webpChunk, type WebpChunk } from './riff';

/*
 * decisions.md: an animated WebP is processed as its first frame. libwebp's still-image decoder
 * refuses animations, so the first ANMF frame's bitstream (header.ts readFirstFrame) is re-wrapped
 * as a standalone still WebP, decoded as usual and placed on the animation canvas.
 */

/** The first frame as a standalone still WebP: its bitstream, with a VP8X alpha header and its ALPH chunk if it has one. */
export function stillOf(bytes: Uint8Array, first: FirstFrame): Uint8Array {
  const payload = (chunk: WebpChunk) => bytes.subarray(chunk.data, chunk.data + chunk.length);
  const image = webpChunk(first.bitstream.type, payload(first.bitstream));
  if (!first.alph) return concat([riffHeader(4 + image.length), image]);
  const vp8x = new Uint8Array(10);
  vp8x[0] = ALPHA_FLAG;
  setU24le(vp8x, 4, first.frame.width - 1);
  setU24le(vp8x, 7, first.frame.height - 1);
  const body = concat([webpChunk('VP8X', vp8x), webpChunk('ALPH', payload(first.alph)), image]);
  return concat([riffHeader(4 + body.length), body]);
}

function setU24le(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value & 0xff;
  bytes[offset + 1] = (value >> 8) & 0xff;
  bytes[offset + 2] = (value >> 16) & 0xff;
}

/**
 * The bands of the decoded first frame placed at `at` on a
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
