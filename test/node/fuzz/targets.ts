/**
 * The fuzz table: every parser of untrusted container bytes, the seeds its mutations start from, the
 * formats its random input is framed as, and the invariants a successful result must meet.
 *
 * Allowed outcomes for every target: a result that passes `check`, or an AppError with one of
 * `errorCodes` (default UNSUPPORTED_FORMAT), unless `neverThrows` forbids even that. Anything else
 * (TypeError, RangeError, an invariant broken, a case over the time limit) is a failure.
 *
 * Adding a parser is one entry, e.g.
 *   target('readIccProfile', (b) => readIccProfile(b), { seeds: iccSeeds, random: [], check: ... })
 */
import { detectFormat } from '../../../src/image/sniff';
import { readOrientation } from '../../../src/image/exif';
import { readAvifDimensions, primaryItemProperties } from '../../../src/image/header/avif';
import { readJpegDimensions, verifyJpegStructure } from '../../../src/image/header/jpeg';
import { readPngDimensions, verifyPngChunks } from '../../../src/image/header/png';
import { readWebpDimensions, webpChunks } from '../../../src/image/header/webp';
import { stripAvif } from '../../../src/image/strip/avif';
import { stripJpeg } from '../../../src/image/strip/jpeg';
import { stripPng } from '../../../src/image/strip/png';
import { stripWebp } from '../../../src/image/strip/webp';
import { firstFrameAsStill, isAnimatedWebp } from '../../../src/image/webp-first-frame';
import type { ErrorCode } from '../../../src/errors';
import type { Dimensions, ImageFormat } from '../../../src/image/types';
import type { Container } from './arbitraries';
import { allSeeds, animatedWebpSeeds, avifSeeds, jpegSeeds, pngSeeds, webpSeeds, type Seed } from './seeds';

export interface FuzzTarget {
  /** Test name and regression file prefix. */
  name: string;
  run: (bytes: Uint8Array) => unknown;
  /** Files the mutations start from (called once, lazily). */
  seeds: () => readonly Seed[];
  /** Formats whose magic bytes / chunk framing the random input uses ([] = bare random bytes only). */
  random: readonly Container[];
  /** AppError codes that count as a clean rejection. */
  errorCodes?: readonly ErrorCode[];
  /** Not even an AppError is allowed (documented as never throwing). */
  neverThrows?: boolean;
  /** Invariant of a result; throws (any error) if broken. */
  check?: (result: any, input: Uint8Array) => void;
}

export class InvariantError extends Error {
  override name = 'InvariantError';
}

export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(message);
}

function target(name: string, run: FuzzTarget['run'], options: Omit<FuzzTarget, 'name' | 'run'>): FuzzTarget {
  return { name, run, ...options };
}

// ---------------------------------------------------------------------------------------------
// Invariants

const FORMATS: readonly ImageFormat[] = ['jpeg', 'png', 'webp', 'avif'];

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** Positive integer width and height, each at most `max`. */
function dimensions(max: number) {
  return (dims: Dimensions) => {
    invariant(dims && typeof dims === 'object', `dimensions: not an object: ${dims}`);
    for (const side of ['width', 'height'] as const) {
      const v = dims[side];
      invariant(Number.isInteger(v) && v > 0 && v <= max, `dimensions: ${side} ${v} is not an integer in 1..${max}`);
    }
  };
}

const readers: Record<ImageFormat, (bytes: Uint8Array) => Dimensions> = {
  jpeg: readJpegDimensions,
  png: readPngDimensions,
  webp: readWebpDimensions,
  avif: readAvifDimensions,
};

/** Runs `fn` on a stripper's output, where even an AppError means the output is broken. */
function onOutput<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof InvariantError) throw error;
    throw new InvariantError(`${what} threw ${error instanceof Error ? `${error.name}: ${error.message} ${JSON.stringify((error as { detail?: unknown }).detail ?? '')}` : String(error)}`);
  }
}

/**
 * A stripper's output: detected as the same format, read by that format's header reader with the
 * input's dimensions and orientation, and stripping it again changes nothing.
 */
function stripped(format: ImageFormat, strip: (bytes: Uint8Array) => Uint8Array, keepsOrientation: (output: Uint8Array) => boolean = () => true) {
  return (output: Uint8Array, input: Uint8Array) => {
    invariant(output instanceof Uint8Array, 'output is not a Uint8Array');
    // The pipeline strips only what `detectFormat` recognised; a stripper itself checks less (no brands).
    if (detectFormat(input) === format) invariant(detectFormat(output) === format, `output is detected as ${detectFormat(output)}, not ${format}`);
    const before = readers[format](input);
    const after = onOutput('reading the output dimensions', () => readers[format](output));
    invariant(after.width === before.width && after.height === before.height, `output is ${after.width}x${after.height}, input ${before.width}x${before.height}`);
    if (keepsOrientation(output)) {
      const [was, is] = [readOrientation(format, input), readOrientation(format, output)];
      invariant(was === is, `orientation ${was} became ${is}`);
    }
    const again = onOutput('stripping the output again', () => strip(output));
    invariant(sameBytes(again, output), `stripping twice differs from stripping once (${output.length} -> ${again.length} bytes)`);
  };
}

function orientation(result: unknown) {
  invariant(Number.isInteger(result) && (result as number) >= 1 && (result as number) <= 8, `orientation ${result} is not 1..8`);
}

// ---------------------------------------------------------------------------------------------
// The table

export const TARGETS: readonly FuzzTarget[] = [
  target('detectFormat', detectFormat, {
    seeds: allSeeds,
    random: ['jpeg', 'png', 'webp', 'avif'],
    neverThrows: true,
    check: (format) => invariant(format === null || FORMATS.includes(format), `format ${format}`),
  }),
  target('readJpegDimensions', readJpegDimensions, { seeds: jpegSeeds, random: ['jpeg'], check: dimensions(0xffff) }),
  target('verifyJpegStructure', verifyJpegStructure, {
    seeds: jpegSeeds,
    random: ['jpeg'],
    check: (result) => invariant(result === undefined, 'returned a value'),
  }),
  target('readPngDimensions', readPngDimensions, { seeds: pngSeeds, random: ['png'], check: dimensions(0x7fffffff) }),
  target('verifyPngChunks', verifyPngChunks, {
    seeds: pngSeeds,
    random: ['png'],
    check: (result) => invariant(result === undefined, 'returned a value'),
  }),
  target('readWebpDimensions', readWebpDimensions, {
    seeds: webpSeeds,
    random: ['webp'],
    check: (dims: Dimensions) => {
      dimensions(1 << 24)(dims);
      invariant(dims.width * dims.height <= 2 ** 32 - 1, `canvas ${dims.width}x${dims.height} over 2^32 - 1`);
    },
  }),
  target('readAvifDimensions', readAvifDimensions, { seeds: avifSeeds, random: ['avif'], check: dimensions(0xffffffff) }),
  target('primaryItemProperties', primaryItemProperties, {
    seeds: avifSeeds,
    random: ['avif'],
    check: (boxes: ReturnType<typeof primaryItemProperties>, input) => {
      if (boxes === null) return;
      invariant(Array.isArray(boxes), 'not an array or null');
      for (const b of boxes) {
        invariant(typeof b.type === 'string' && b.type.length === 4, `box type ${JSON.stringify(b.type)}`);
        invariant(0 <= b.start && b.start + 8 <= b.body && b.body <= b.end && b.end <= input.length, `box ${b.type} ${b.start}/${b.body}/${b.end} outside ${input.length} bytes`);
      }
    },
  }),
  ...FORMATS.map((format) =>
    target(`readOrientation-${format}`, (bytes) => readOrientation(format, bytes), {
      seeds: { jpeg: jpegSeeds, png: pngSeeds, webp: webpSeeds, avif: avifSeeds }[format],
      random: [format],
      neverThrows: true,
      check: orientation,
    }),
  ),
  target('stripJpeg', stripJpeg, { seeds: jpegSeeds, random: ['jpeg'], check: stripped('jpeg', stripJpeg) }),
  target('stripPng', stripPng, { seeds: pngSeeds, random: ['png'], check: stripped('png', stripPng) }),
  target('stripWebp', stripWebp, {
    seeds: webpSeeds,
    random: ['webp'],
    // Documented: the orientation is kept only in an extended (VP8X) file.
    check: stripped('webp', stripWebp, (output) => [...webpChunks(output)].some((c) => c.type === 'VP8X')),
  }),
  target('stripAvif', stripAvif, {
    seeds: avifSeeds,
    random: ['avif'],
    check: (output: Uint8Array, input: Uint8Array) => {
      invariant(output.length <= 2 * input.length, `output ${output.length} bytes for ${input.length} input bytes`);
      stripped('avif', stripAvif)(output, input);
    },
  }),
  target('isAnimatedWebp', isAnimatedWebp, {
    seeds: webpSeeds,
    random: ['webp'],
    check: (result) => invariant(typeof result === 'boolean', `returned ${result}`),
  }),
  target('firstFrameAsStill', firstFrameAsStill, {
    seeds: () => [...animatedWebpSeeds(), ...animatedWebpSeeds(), ...webpSeeds()], // mostly animations
    random: ['webp'],
    check: (result: ReturnType<typeof firstFrameAsStill>, input) => {
      invariant((result === null) === !isAnimatedWebp(input), `null result ${result === null} for isAnimatedWebp ${isAnimatedWebp(input)}`);
      if (!result) return;
      const { still, canvas, frame } = result;
      const inputCanvas = readWebpDimensions(input);
      invariant(canvas.width === inputCanvas.width && canvas.height === inputCanvas.height, 'canvas differs from the VP8X size');
      invariant(frame.x >= 0 && frame.y >= 0 && frame.x % 2 === 0 && frame.y % 2 === 0, `frame offset ${frame.x},${frame.y}`);
      invariant(frame.x + frame.width <= canvas.width && frame.y + frame.height <= canvas.height, 'frame outside the canvas');
      invariant(detectFormat(still) === 'webp' && !isAnimatedWebp(still), 'the still is not a still WebP');
      const size = onOutput('reading the still', () => readWebpDimensions(still));
      invariant(size.width === frame.width && size.height === frame.height, `still ${size.width}x${size.height}, frame ${frame.width}x${frame.height}`);
      onOutput('walking the still', () => [...webpChunks(still)]);
      invariant(still.length <= input.length + 64, `still of ${still.length} bytes from ${input.length}`);
    },
  }),
];
