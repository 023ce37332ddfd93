import { AppError } from '../errors';
import type { ImageFile } from './formats/index';
import type { ProcessingPlan } from './plan';
import { doWork } from './run-context';
import { forward, type RowSource } from './stages/rows';
import type { Dimensions } from './types';

/*
 * Opening a file's rows, shared by the main pass (pipeline.ts) and the smart-crop pass
 * (smart-crop-pass.ts): what a decoder throws becomes the file's error, and the work behind each
 * band counts toward the run's next turn.
 */

/**
 * Counts the work behind each band `source` hands on (`nsPerPixel`, estimated) toward the run's
 * next turn, when other requests in the isolate go on (run-context.ts).
 */
export function working(source: RowSource, nsPerPixel: number): RowSource {
  return {
    ...forward(source),
    async read() {
      const band = await source.read();
      const turn = band && doWork(band.rows * source.width * nsPerPixel);
      if (turn) await turn;
      return band;
    },
  };
}

export async function decode(file: ImageFile, options: ProcessingPlan['decode'], expected: Dimensions): Promise<RowSource> {
  const source = await guardedDecode(file, () => file.decode(options));
  const { width, height } = expected;
  if (source.width !== width || source.height !== height) {
    source.close();
    throw damaged(file, `the decoder gives ${source.width}x${source.height}, the header promised ${width}x${height}`);
  }
  return source;
}

async function guardedDecode<T>(file: ImageFile, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (error) {
    throw asDecodeError(file, error);
  }
}

/** Running out of memory says nothing about the file; everything else a decoder throws is the file's fault. */
export function asDecodeError(file: ImageFile, error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof RangeError || /memory|Cannot enlarge/i.test(String(error))) {
    return new AppError('CONVERSION_FAILED', 'The image could not be processed: it needs more memory than is available.', error);
  }
  return damaged(file, error);
}

function damaged(file: ImageFile, detail: unknown): AppError {
  return new AppError(
    'UNSUPPORTED_FORMAT',
    `The file looks like ${file.format.label} but could not be decoded: it is damaged, truncated or uses a feature that is not supported.`,
    detail,
  );
}
