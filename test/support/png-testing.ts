/**
 * Test-only helpers for the PNG codec's tests (workerd): a decode read to its end as the pipeline
 * reads it, with what it held, and the check that a failure is the "damaged file" error.
 */
import { expect } from 'vitest';
import { AppError } from '../../src/errors';
import { verifyPngChunks, readPngHeader } from '../../src/image/formats/png/header';
import type { Region } from '../../src/image/operations';
import { openPng } from '../../src/image/formats/png/decode';
import type { RgbaImage } from '../../src/image/types';

/** What the pipeline does with an upload: chunk checks, then the streaming decode, read to the end. */
export async function decodePng(bytes: Uint8Array, region: Region | null = null, bandRows?: number): Promise<RgbaImage & { heldBytes: number; wasmBytes: number }> {
  const header = readPngHeader(bytes);
  verifyPngChunks(bytes, header);
  const source = await openPng(bytes, header, { shrink: 1, region }, bandRows);
  const data = new Uint8Array(source.width * source.height * 4);
  let heldBytes = source.heldBytes();
  let wasmBytes = source.wasmBytes();
  let expectedY = 0;
  try {
    for (let band = await source.read(); band; band = await source.read()) {
      expect(band.y).toBe(expectedY);
      expectedY += band.rows;
      heldBytes = Math.max(heldBytes, source.heldBytes());
      wasmBytes = Math.max(wasmBytes, source.wasmBytes());
      data.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
    }
  } finally {
    source.close();
  }
  expect(expectedY).toBe(source.height);
  expect(source.heldBytes()).toBe(0);
  return { data, width: source.width, height: source.height, heldBytes, wasmBytes };
}

export async function damage(run: () => Promise<unknown>): Promise<AppError> {
  const error = await run().then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('UNSUPPORTED_FORMAT');
  expect((error as AppError).message).toMatch(/damaged/);
  return error as AppError;
}
