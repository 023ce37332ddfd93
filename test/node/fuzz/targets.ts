/**
 * The fuzz table: every parser of untrusted container bytes, the seeds its mutations start from, the
 * formats its random input is framed as, and the invariants a successful result must meet.
 *
 * Allowed outcomes for every target: a result that passes `check`, or an AppError with one of
 * `errorCodes` (default UNSUPPORTED_FORMAT), unless `neverThrows` forbids even that (or any Error,
 * for vendored code marked `anyError`). Anything else
 * (TypeError, RangeError, an invariant broken, a case over the time limit) is a failure.
 *
 * Adding a parser is one entry, e.g.
 *   target('parseIccProfile', parseIccProfile, { seeds: iccProfileSeeds, random: ['icc'], neverThrows: true, check: ... })
 */
import { AppError } from '../../../src/errors';
import { cmykConversion, rgbConversion } from '../../../src/image/stages/colour/conversion';
import { parseIccProfile } from '../../../src/image/stages/colour/icc';
import { toSrgb } from '../../../src/image/stages/colour/index';
import { MAX_INFLATED_PROFILE } from '../../../src/image/stages/colour/inflate-profile';
import { asIcc } from '../../support/icc-writer';
import { detectFormat, FORMATS as REGISTRY } from '../../../src/image/formats/index';
import { parseAvifContainer } from '../../../src/image/formats/avif/container';
import type { ImageHeader } from '../../../src/image/header';

import { crc32, pngChunks } from '../../../src/image/formats/png/header';
import { readWebpDimensions } from '../../../src/image/formats/webp/header';
import { webpChunks } from '../../../src/image/formats/webp/riff';
import { firstFrameAsStill, isAnimatedWebp } from '../../support/webp-reference';
import type { ErrorCode } from '../../../src/errors';
import type { CmykImage, Dimensions, ImageFormat, RgbaImage } from '../../../src/image/types';
import type { Container } from './arbitraries';
import {
  allSeeds, animatedWebpSeeds, avifDecoderSeeds, avifSeeds, cicpContainerSeeds, cmykJpegSeeds, iccContainerSeeds, iccProfileSeeds, jpegSeeds, pngSeeds,
  webpSeeds, type Seed,
} from './seeds';
import { colourProfileOf, readDimensions, readIccProfile, readOrientation, stripped as strip, verifiedAvif } from '../../support/formats';
import { collectFrame } from '../../support/row-sources';

export interface FuzzTarget {
  /** Test name and regression file prefix. */
  name: string;
  run: (bytes: Uint8Array) => unknown;
  /** `run` returns a promise, which the harness awaits (the case's time includes the wait). */
  async?: boolean;
  /** Files the mutations start from (called once, lazily). */
  seeds: () => readonly Seed[] | Promise<readonly Seed[]>;
  /** Formats whose magic bytes / chunk framing the random input uses ([] = bare random bytes only). */
  random: readonly Container[];
  /** AppError codes that count as a clean rejection. */
  errorCodes?: readonly ErrorCode[];
  /** Not even an AppError is allowed (documented as never throwing). */
  neverThrows?: boolean;
  /** Any thrown Error counts as a clean rejection (vendored code whose errors the pipeline maps wholesale). */
  anyError?: boolean;
  /** Share of FUZZ_RUNS this target runs (default 1), for targets whose cases cost tens of milliseconds. */
  runShare?: number;
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

/** Largest side each format's header can state. */
const MAX_SIDE: Record<ImageFormat, number> = { jpeg: 0xffff, png: 0x7fffffff, webp: 1 << 24, avif: 0xffffffff };

/** A header record: a size within the format's range, an orientation, colour descriptions and metadata views inside the input. */
function header(format: ImageFormat) {
  return (record: ImageHeader, input: Uint8Array) => {
    invariant(record.format === format, `format ${record.format}`);
    dimensions(MAX_SIDE[format])(record);
    orientation(record.orientation);
    for (const description of record.colour) {
      invariant(['icc', 'icc-deflated', 'cicp'].includes(description.kind), `colour ${description.kind}`);
      if (description.kind !== 'cicp') invariant(description.bytes.length <= input.length, 'an ICC profile longer than the file');
    }
    for (const blob of [record.exif, record.xmp]) {
      if (blob) invariant(blob.buffer === input.buffer && blob.byteOffset >= input.byteOffset && blob.byteOffset + blob.length <= input.byteOffset + input.length, 'a metadata blob outside the file');
    }
  };
}

const readers: Record<ImageFormat, (bytes: Uint8Array) => Dimensions> = {
  jpeg: (bytes) => readDimensions('jpeg', bytes),
  png: (bytes) => readDimensions('png', bytes),
  webp: (bytes) => readDimensions('webp', bytes),
  avif: (bytes) => readDimensions('avif', bytes),
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
function stripped(format: ImageFormat, keepsOrientation: (output: Uint8Array) => boolean = () => true) {
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
    const again = onOutput('stripping the output again', () => strip(format, output));
    invariant(sameBytes(again, output), `stripping twice differs from stripping once (${output.length} -> ${again.length} bytes)`);
  };
}

function orientation(result: unknown) {
  invariant(Number.isInteger(result) && (result as number) >= 1 && (result as number) <= 8, `orientation ${result} is not 1..8`);
}

/** An embedded profile: null, or bytes no longer than the container can hold (PNG: the inflate cap); JPEG, WebP and AVIF profiles are views or copies of the input's bytes. */
function embeddedProfileResult(format: ImageFormat) {
  return (profile: Uint8Array | null, input: Uint8Array) => {
    if (profile === null) return;
    invariant(profile instanceof Uint8Array, `profile is ${Object.prototype.toString.call(profile)}`);
    if (format === 'png') {
      invariant(profile.length <= MAX_INFLATED_PROFILE, `inflated profile of ${profile.length} bytes, cap ${MAX_INFLATED_PROFILE}`);
      return;
    }
    if (format === 'jpeg') {
      // Concatenated APP2 payloads (14-byte ICC_PROFILE header and 4 marker/length bytes each): a copy, shorter than the input.
      invariant(profile.length <= input.length - 2 - 18, `profile of ${profile.length} bytes from ${input.length} input bytes`);
      invariant(profile.buffer !== input.buffer, 'the JPEG profile is not a copy');
      return;
    }
    // WebP ICCP chunk / AVIF colr box: a view into the input.
    invariant(profile.buffer === input.buffer, `the ${format} profile is not a view of the input`);
    const start = profile.byteOffset - input.byteOffset;
    invariant(start >= 0 && start + profile.length <= input.length, `profile view ${start}+${profile.length} outside ${input.length} bytes`);
  };
}

/** A parsed profile: null, or header fields and tag views inside the declared profile size. */
function parsedProfile(profile: ReturnType<typeof parseIccProfile>, input: Uint8Array) {
  if (profile === null) return;
  invariant(typeof profile.colorSpace === 'string' && profile.colorSpace.length === 4, `colour space ${JSON.stringify(profile.colorSpace)}`);
  invariant(profile.pcs === 'XYZ ' || profile.pcs === 'Lab ', `PCS ${JSON.stringify(profile.pcs)}`);
  invariant(Number.isInteger(profile.version) && profile.version >= 0 && profile.version <= 255, `version ${profile.version}`);
  const size = Buffer.from(input.buffer, input.byteOffset, 4).readUInt32BE(0);
  invariant(size <= input.length, `declared size ${size} over ${input.length} bytes`);
  invariant(profile.tags.size <= 1024, `${profile.tags.size} tags`);
  for (const [signature, tag] of profile.tags) {
    invariant(tag.buffer === input.buffer, `tag ${signature} is not a view of the input`);
    const start = tag.byteOffset - input.byteOffset;
    invariant(start >= 0 && start + tag.length <= size, `tag ${signature} at ${start}+${tag.length} outside the ${size}-byte profile`);
  }
}

/** A fixed 16x16 picture (every channel varies, some pixels repeat) as RGBA and as CMYK ink amounts. */
const SIDE = 16;
const PIXELS = Uint8Array.from({ length: SIDE * SIDE * 4 }, (_, i) => (i % 4 === 3 ? (i >> 4) * 17 : (i * 73 + (i >> 6) * 29) & 0xff));
const rgbaImage = (): RgbaImage => ({ data: PIXELS.slice(), width: SIDE, height: SIDE });
const cmykImage = (): CmykImage => ({ colorModel: 'cmyk', data: PIXELS.slice(), width: SIDE, height: SIDE });

/** Converted pixels: an RGBA image of the fixed size, `data` still PIXELS.length bytes; `alpha` says what alpha must be. */
function converted(image: RgbaImage, alpha: 'kept' | 'opaque') {
  invariant(image.width === SIDE && image.height === SIDE, `converted image is ${image.width}x${image.height}`);
  invariant((image.data instanceof Uint8Array || image.data instanceof Uint8ClampedArray) && image.data.length === PIXELS.length, `converted data of ${image.data.length} bytes, expected ${PIXELS.length}`);
  for (let i = 3; i < PIXELS.length; i += 4) {
    const expected = alpha === 'kept' ? PIXELS[i] : 255;
    invariant(image.data[i] === expected, `alpha at pixel ${i >> 2} is ${image.data[i]}, expected ${expected}`);
  }
}

/** Pixel guard before decoding, as the pipeline's input pixel limit (kept small so every case is quick). */
const MAX_DECODE_PIXELS = 4_000_000;

/** A copy of a PNG with every whole chunk's CRC recomputed (chunks are walked until one is cut short). */
function withValidCrcs(bytes: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes);
  try {
    for (const chunk of pngChunks(copy)) {
      const end = chunk.start + 8 + chunk.length;
      if (end + 4 > copy.length) break;
      new DataView(copy.buffer).setUint32(end, crc32(copy.subarray(chunk.start + 4, end)));
    }
  } catch {
    // a damaged chunk list: left as it is, for the checks to refuse
  }
  return copy;
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
  // Each format's header reader: the one parse of its container.
  ...FORMATS.map((format) =>
    target(`readHeader-${format}`, (bytes) => REGISTRY[format].read(bytes).header, {
      seeds: { jpeg: jpegSeeds, png: pngSeeds, webp: webpSeeds, avif: avifSeeds }[format],
      random: [format],
      check: header(format),
    }),
  ),
  ...(['jpeg', 'png'] as const).map((format) =>
    target(`verify-${format}`, (bytes) => REGISTRY[format].read(bytes).verify(), {
      seeds: { jpeg: jpegSeeds, png: pngSeeds }[format],
      random: [format],
      check: (result) => invariant(result === undefined, 'returned a value'),
    }),
  ),
  target('readWebpDimensions', readWebpDimensions, {
    seeds: webpSeeds,
    random: ['webp'],
    check: (dims: Dimensions) => {
      dimensions(1 << 24)(dims);
      invariant(dims.width * dims.height <= 2 ** 32 - 1, `canvas ${dims.width}x${dims.height} over 2^32 - 1`);
    },
  }),
  target('verify-avif', verifiedAvif, {
    seeds: () => [...avifSeeds(), ...avifDecoderSeeds()],
    random: ['avif'],
    check: (container: ReturnType<typeof verifiedAvif>, input) => {
      dimensions(0xffffffff)(container.size);
      const header = readDimensions('avif', input);
      invariant(header.width === container.size.width && header.height === container.size.height, 'readAvifDimensions disagrees');
      for (const layer of [container.color, container.alpha]) {
        if (!layer) continue;
        invariant(layer.tiles.length === (layer.grid ? layer.grid.rows * layer.grid.columns : 1), 'tile count');
        for (const tile of layer.tiles) {
          for (const { start, end } of tile.ranges) invariant(0 <= start && start < end && end <= input.length, `range ${start}..${end} outside ${input.length} bytes`);
        }
      }
    },
  }),
  // dav1d in WebAssembly on mutated small files: a frame of exactly the verified size, or damage.
  target('avifDecoder', async (bytes) => {
    // As the pipeline does: the header (the one parse), the container checks, then the decode.
    const file = REGISTRY.avif.read(bytes);
    file.verify();
    return collectFrame(await file.decode({ shrink: 1, region: null }));
  }, {
    async: true,
    seeds: avifDecoderSeeds,
    random: ['avif'],
    runShare: 0.1,
    check: (frame: Awaited<ReturnType<typeof collectFrame>>, input) => {
      const { size } = verifiedAvif(input);
      invariant(frame.width === size.width && frame.height === size.height, `decoded ${frame.width}x${frame.height}, verified ${size.width}x${size.height}`);
      invariant(frame.data.length === size.width * size.height * 4, 'frame length');
    },
  }),
  target('parseAvifContainer', parseAvifContainer, {
    seeds: avifSeeds,
    random: ['avif'],
    check: (container: ReturnType<typeof parseAvifContainer>, input) => {
      for (const b of [...container.top, ...container.properties.map((link) => link.box)]) {
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
  target('stripJpeg', (bytes) => strip('jpeg', bytes), { seeds: jpegSeeds, random: ['jpeg'], check: stripped('jpeg') }),
  target('stripPng', (bytes) => strip('png', bytes), { seeds: pngSeeds, random: ['png'], check: stripped('png') }),
  target('stripWebp', (bytes) => strip('webp', bytes), {
    seeds: webpSeeds,
    random: ['webp'],
    // Documented: the orientation is kept only in an extended (VP8X) file.
    check: stripped('webp', (output) => [...webpChunks(output)].some((c) => c.type === 'VP8X')),
  }),
  target('stripAvif', (bytes) => strip('avif', bytes), {
    seeds: avifSeeds,
    random: ['avif'],
    check: (output: Uint8Array, input: Uint8Array) => {
      invariant(output.length <= 2 * input.length, `output ${output.length} bytes for ${input.length} input bytes`);
      stripped('avif')(output, input);
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
  ...FORMATS.map((format) =>
    target(`readIccProfile-${format}`, (bytes) => readIccProfile(format, bytes), {
      async: true, // PNG iCCP is inflated with DecompressionStream
      seeds: iccContainerSeeds[format],
      random: [format],
      neverThrows: true,
      check: embeddedProfileResult(format),
    }),
  ),
  ...(['png', 'avif'] as const).map((format) =>
    target(`colourProfile-${format}`, (bytes) => colourProfileOf(format, bytes), {
      async: true,
      seeds: cicpContainerSeeds[format],
      random: [format],
      neverThrows: true,
      check: (profile: Awaited<ReturnType<typeof colourProfileOf>>) => {
        if (profile?.kind !== 'cicp') return;
        const cicp = profile;
        const { primaries, transfer } = cicp;
        invariant(Number.isInteger(primaries) && primaries >= 0 && primaries <= 0xffff, `primaries ${primaries}`);
        invariant(Number.isInteger(transfer) && transfer >= 0 && transfer <= 0xffff, `transfer ${transfer}`);
      },
    }),
  ),
  target('parseIccProfile', parseIccProfile, { seeds: iccProfileSeeds, random: ['icc'], neverThrows: true, check: parsedProfile }),
  // The conversion targets take the bytes as a profile and convert a fixed 16x16 picture: an
  // unusable profile is no profile (null), so none may throw. Each of them runs runShare 0.2 of
  // FUZZ_RUNS (2,000 cases at the default): building a conversion samples the profile on a grid
  // (33^3 nodes for RGB LUTs, 17^4 for CMYK: ~50 ms a case), so 10,000 would take minutes.
  target(
    'rgbConversion',
    (bytes) => {
      const profile = parseIccProfile(bytes);
      const convert = profile && rgbConversion(profile);
      const image = rgbaImage();
      convert?.(image.data);
      return image;
    },
    { seeds: iccProfileSeeds, random: ['icc'], neverThrows: true, runShare: 0.2, check: (image: RgbaImage) => converted(image, 'kept') },
  ),
  target(
    'cmykConversion',
    (bytes) => {
      const profile = parseIccProfile(bytes);
      const convert = profile && cmykConversion(profile);
      const image = cmykImage();
      convert?.(image.data);
      return convert ? { data: image.data, width: SIDE, height: SIDE } : null;
    },
    {
      // All profiles, CMYK ones a fifth of them: each successful CMYK case costs ~50 ms.
      seeds: iccProfileSeeds,
      random: ['icc'],
      neverThrows: true,
      runShare: 0.2,
      check: (image: RgbaImage | null) => image && converted(image, 'opaque'),
    },
  ),
  target(
    'toSrgb',
    (bytes) => [toSrgb(rgbaImage(), asIcc(bytes)), toSrgb(cmykImage(), asIcc(bytes))],
    {
      seeds: iccProfileSeeds,
      random: ['icc'],
      neverThrows: true,
      runShare: 0.2,
      check: ([rgba, cmyk]: [RgbaImage, RgbaImage]) => {
        converted(rgba, 'kept');
        converted(cmyk, 'opaque'); // CMYK always converts, through the profile or the uncalibrated fallback
        invariant(!('colorModel' in cmyk), 'toSrgb returned CMYK');
      },
    },
  ),
  target(
    'jpegDecoder',
    async (bytes) => {
      // The pipeline reads the header and applies its pixel limit before decoding.
      const { width, height } = readDimensions('jpeg', bytes);
      if (width * height > MAX_DECODE_PIXELS) throw new AppError('FILE_TOO_LARGE', `${width}x${height}`);
      const source = await REGISTRY.jpeg.read(bytes).decode({ shrink: 1, region: null });
      return { model: source.model, frame: await collectFrame(source), header: { width, height } };
    },
    {
      async: true,
      seeds: () => [...cmykJpegSeeds(), ...jpegSeeds()],
      random: ['jpeg'],
      errorCodes: ['UNSUPPORTED_FORMAT', 'FILE_TOO_LARGE'],
      check: ({ model, frame, header }: { model: string; frame: RgbaImage; header: Dimensions }) => {
        invariant(frame.width === header.width && frame.height === header.height, `decoded ${frame.width}x${frame.height}, header ${header.width}x${header.height}`);
        invariant(model === 'rgba' || model === 'cmyk', `model ${model}`);
        invariant(frame.data.length === frame.width * frame.height * 4, `${frame.data.length} bytes for ${frame.width}x${frame.height}`);
      },
    },
  ),
  // Our PNG decoder (codecs/png on zlib) and our libwebp build, after the checks the
  // pipeline makes first: a frame of exactly the header's size, or damage. A mutated PNG gets its
  // CRCs fixed first, as a hostile file would have them, so that its contents reach the decoder.
  ...([
    ['pngDecoder', 'png', pngSeeds],
    ['webpDecoder', 'webp', webpSeeds],
  ] as const).map(([name, format, seeds]) =>
    target(
      name,
      async (bytes) => {
        const input = format === 'png' ? withValidCrcs(bytes) : bytes;
        const file = REGISTRY[format].read(input);
        const header = { width: file.header.width, height: file.header.height };
        if (header.width * header.height > MAX_DECODE_PIXELS) throw new AppError('FILE_TOO_LARGE', `${header.width}x${header.height}`);
        file.verify();
        return { frame: await collectFrame(await file.decode({ shrink: 1, region: null })), header };
      },
      {
        async: true,
        seeds,
        random: [format],
        errorCodes: ['UNSUPPORTED_FORMAT', 'FILE_TOO_LARGE'],
        check: ({ frame, header }: { frame: RgbaImage; header: Dimensions }) => {
          invariant(frame.width === header.width && frame.height === header.height, `decoded ${frame.width}x${frame.height}, header ${header.width}x${header.height}`);
          invariant(frame.data.length === frame.width * frame.height * 4, `${frame.data.length} bytes for ${frame.width}x${frame.height}`);
        },
      },
    ),
  ),
];
