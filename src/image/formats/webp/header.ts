import { AppError } from '../../../errors';
import { damaged, fourCC, need, u16le, u24le, u32le, u8 } from '../../bytes';
import { exifOrientation, tiffBlock } from '../../exif';
import type { ImageHeader } from '../../header';
import type { Dimensions } from '../../types';
import { chunkList, riffEnd, webpChunks, type WebpChunk } from './riff';

/** The bitstream a decoder reads: its size, its kind, and the bytes copied into the instance. */
export interface WebpStream {
  width: number;
  height: number;
  /** A lossy stream with an ALPH chunk, or a lossless one (its alpha_is_used bit is only a hint). */
  alpha: boolean;
  lossless: boolean;
  /** Bytes of the file (or the first frame's still, for an animation) copied into the instance. */
  inputBytes: number;
}

export interface WebpHeader extends ImageHeader {
  /** The bitstream the decoder reads: the file's, or its animation's first frame's. */
  stream: WebpStream;
  /** An animation's first frame and where it lies on the canvas (decisions.md: the first frame only); null for a still. */
  animation: FirstFrame | null;
  /** Damage in an animation's first frame, reported by the container checks after the pixel limit. */
  firstFrameDamage: AppError | null;
}

export const ANIMATION_FLAG = 0x02;
export const ALPHA_FLAG = 0x10;
const ICC_FLAG = 0x20;

/**
 * The header, in one walk of the chunks: the size from the first chunk (VP8X canvas, VP8L or VP8
 * key frame), the bitstream the decoder will read, and for an extended (VP8X) file the ICCP chunk
 * its flags announce (as libwebp's readers require), the first EXIF and XMP chunks. A still VP8X
 * file's first bitstream must be exactly the canvas size; an animation's frames must lie inside the
 * canvas, and its first frame is read here (its damage is reported by verifyFirstFrame, after the
 * pixel limit). Damage before the image is refused; damage after it is left alone, as a decode
 * never reads it.
 */
export function readWebpHeader(bytes: Uint8Array): WebpHeader {
  const canvas = readWebpDimensions(bytes);
  const flags = fourCC(bytes, 12) === 'VP8X' ? u8(bytes, 20) : -1;
  const animated = flags >= 0 && (flags & ANIMATION_FLAG) !== 0;
  let animation: FirstFrame | null = null;
  let firstFrameDamage: AppError | null = null;
  try {
    if (animated) animation = readFirstFrame(bytes, canvas);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    firstFrameDamage = error;
  }
  let icc: Uint8Array | null = null;
  let exif: Uint8Array | null = null;
  let xmp: Uint8Array | null = null;
  let alph = false;
  // A simple file is its first chunk; only the header bytes of it are read (a decode finds damage further on).
  let bitstream: WebpChunk | null = flags < 0 ? { type: fourCC(bytes, 12), start: 12, data: 20, length: u32le(bytes, 16), end: bytes.length } : null;
  const chunks = webpChunks(bytes);
  for (let imageRead = flags < 0; ; ) {
    let next: IteratorResult<WebpChunk>;
    try {
      next = chunks.next();
    } catch (error) {
      if (imageRead && error instanceof AppError) break;
      throw error;
    }
    if (next.done) break;
    const chunk = next.value;
    const data = bytes.subarray(chunk.data, chunk.data + chunk.length);
    if (chunk.type === 'ICCP' && flags >= 0 && (flags & ICC_FLAG) !== 0) icc ??= data;
    if (chunk.type === 'EXIF') exif ??= tiffBlock(data);
    if (chunk.type === 'XMP ') xmp ??= data;
    if (chunk.type === 'ALPH' && !bitstream) alph = true;
    if ((chunk.type === 'VP8 ' || chunk.type === 'VP8L') && !animated && !bitstream) {
      bitstream = chunk;
      checkStillBitstream(bytes, chunk, canvas);
    }
    if (chunk.type === 'ANMF' && animated) checkAnimationFrame(bytes, chunk, canvas);
    imageRead ||= animated ? chunk.type === 'ANMF' : bitstream !== null;
  }
  if (!animated && !bitstream) throw damaged('webp: VP8X file without a VP8 or VP8L bitstream');
  // (An animation whose first frame is damaged is refused by the container checks, before its stream is used.)
  const stream = animation?.stream ?? (bitstream ? streamOf(bitstream, canvas, alph, bytes.length) : { ...canvas, alpha: true, lossless: false, inputBytes: bytes.length });
  return {
    format: 'webp',
    ...canvas,
    orientation: exifOrientation(exif),
    colour: icc ? [{ kind: 'icc', bytes: icc }] : [],
    alpha: flags >= 0 ? (flags & (ALPHA_FLAG | ANIMATION_FLAG)) !== 0 : bitstream!.type === 'VP8L' && (u8(bytes, 24) & 0x10) !== 0,
    bitDepth: 8,
    exif,
    xmp,
    stream,
    animation,
    firstFrameDamage,
  };
}

/** The container checks after the pixel limit: an animation's first frame must be sound. */
export function verifyFirstFrame(_bytes: Uint8Array, { firstFrameDamage }: WebpHeader): void {
  if (firstFrameDamage) throw firstFrameDamage;
}

/** The bitstream a decoder reads: `inputBytes` of it are copied into the instance. */
export function streamOf(bitstream: WebpChunk, size: Dimensions, alph: boolean, inputBytes: number): WebpStream {
  const lossless = bitstream.type === 'VP8L';
  return { ...size, alpha: lossless || alph, lossless, inputBytes };
}

/**
 * Width and height from the first chunk: VP8X canvas (24-bit, +1), VP8L (14-bit, +1) or the VP8
 * key-frame header (14-bit). Only the header bytes are read.
 */
export function readWebpDimensions(bytes: Uint8Array): Dimensions {
  const end = riffEnd(bytes);
  if (end < 20) throw damaged('webp: no chunk');
  const type = fourCC(bytes, 12);
  const length = u32le(bytes, 16);
  const at = 20;
  const dims = (() => {
    switch (type) {
      case 'VP8X':
        if (length < 10) throw damaged('webp: short VP8X');
        return { width: u24le(bytes, at + 4) + 1, height: u24le(bytes, at + 7) + 1 };
      case 'VP8L':
        return readVp8l(bytes, at, length);
      case 'VP8 ':
        return readVp8(bytes, at, length);
      default:
        throw damaged(`webp: first chunk ${JSON.stringify(type)}`);
    }
  })();
  if (dims.width * dims.height > 2 ** 32 - 1) throw damaged('webp: canvas area over 2^32');
  return dims;
}

/** The size a VP8 or VP8L chunk's bitstream declares. */
export function bitstreamSize(bytes: Uint8Array, chunk: WebpChunk): Dimensions {
  return chunk.type === 'VP8L' ? readVp8l(bytes, chunk.data, chunk.length) : readVp8(bytes, chunk.data, chunk.length);
}

/** libwebp refuses a still's bitstream that is not the canvas size too, but only after reading it. */
function checkStillBitstream(bytes: Uint8Array, chunk: WebpChunk, canvas: Dimensions): void {
  const frame = bitstreamSize(bytes, chunk);
  if (frame.width !== canvas.width || frame.height !== canvas.height) {
    throw damaged(`webp: ${chunk.type.trim()} bitstream is ${frame.width}x${frame.height} but the VP8X canvas ${canvas.width}x${canvas.height}`);
  }
}

/** Every ANMF frame must lie inside the canvas, as libwebp's demuxer requires. */
function checkAnimationFrame(bytes: Uint8Array, chunk: WebpChunk, canvas: Dimensions): void {
  if (chunk.length < 16) throw damaged('webp: short ANMF');
  const [x, y] = [u24le(bytes, chunk.data) * 2, u24le(bytes, chunk.data + 3) * 2];
  const [width, height] = [u24le(bytes, chunk.data + 6) + 1, u24le(bytes, chunk.data + 9) + 1];
  if (x + width > canvas.width || y + height > canvas.height) {
    throw damaged(`webp: frame ${width}x${height} at ${x},${y} outside the ${canvas.width}x${canvas.height} canvas`);
  }
}

function readVp8l(bytes: Uint8Array, at: number, length: number): Dimensions {
  if (length < 5 || u8(bytes, at) !== 0x2f) throw damaged('webp: bad VP8L signature');
  need(bytes, at + 1, 4, 'webp: VP8L header');
  const bits = u32le(bytes, at + 1);
  if (bits >>> 29 !== 0) throw damaged('webp: VP8L version');
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

function readVp8(bytes: Uint8Array, at: number, length: number): Dimensions {
  if (length < 10) throw damaged('webp: short VP8');
  const frameTag = u24le(bytes, at);
  if (frameTag & 1) throw damaged('webp: VP8 is not a key frame');
  if (!(bytes[at + 3] === 0x9d && bytes[at + 4] === 0x01 && bytes[at + 5] === 0x2a)) throw damaged('webp: VP8 start code');
  const width = u16le(bytes, at + 6) & 0x3fff;
  const height = u16le(bytes, at + 8) & 0x3fff;
  if (width === 0 || height === 0) throw damaged(`webp: VP8 size ${width}x${height}`);
  return { width, height };
}

/** ANMF payload: X/2, Y/2, width-1, height-1, duration (24-bit each), flags byte; frame data follows. */
const ANMF_HEADER = 16;

export interface FrameRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An animation's first frame: where it lies on the canvas and where its chunks are in the file. */
export interface FirstFrame {
  /** Animation canvas size (VP8X), the size of the processed image. */
  canvas: Dimensions;
  /** Where the first frame lies on the canvas; its size is also its bitstream's size. */
  frame: FrameRect;
  anmf: WebpChunk;
  alph: WebpChunk | null;
  bitstream: WebpChunk;
  /** What the decoder reads: the frame's still (stillOf). */
  stream: WebpStream;
}

/**
 * The first frame of an animation (the header checked the VP8X flag): ANIM must come before it, and
 * no image chunk outside a frame. Damage in the animation header or the first frame throws
 * `damaged`; chunks after the first ANMF are not read here. The frame's bitstream must declare
 * exactly the frame size, which lies inside the canvas, so decoding it allocates no more than the
 * canvas the pixel limit has checked.
 */
export function readFirstFrame(bytes: Uint8Array, canvas: Dimensions): FirstFrame {
  let animation = false;
  let first = true;
  for (const chunk of webpChunks(bytes)) {
    if (first) {
      first = false; // the VP8X the header has read
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
  // The frame data is a chunk list like a RIFF payload.
  let alph: WebpChunk | null = null;
  let bitstream: WebpChunk | null = null;
  for (const chunk of chunkList(bytes, at + ANMF_HEADER, at + anmf.length)) {
    if (chunk.type === 'ALPH') {
      alph ??= chunk; // libwebp uses the first one
    } else if (chunk.type === 'VP8 ' || chunk.type === 'VP8L') {
      bitstream = chunk;
      break; // anything after the bitstream is unknown chunks
    } else if (chunk.type === 'VP8X' || chunk.type === 'ANIM' || chunk.type === 'ANMF') {
      throw damaged(`webp: ${JSON.stringify(chunk.type)} inside a frame`);
    }
  }
  if (!bitstream) throw damaged('webp: first frame without a bitstream');
  if (alph && bitstream.type === 'VP8L') throw damaged('webp: ALPH with a VP8L frame');
  const size = bitstreamSize(bytes, bitstream);
  if (size.width !== frame.width || size.height !== frame.height) {
    throw damaged(`webp: first frame is ${frame.width}x${frame.height} but its bitstream ${size.width}x${size.height}`);
  }
  const stillBytes = 12 + (alph ? 18 + chunkBytes(alph) : 0) + chunkBytes(bitstream);
  return { canvas, frame, anmf, alph, bitstream, stream: streamOf(bitstream, size, alph !== null, stillBytes) };
}

const chunkBytes = (chunk: WebpChunk) => 8 + chunk.length + (chunk.length & 1);
