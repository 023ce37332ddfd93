import { credentialRefused, type Credential } from '../auth/credentials';
import { deleteResults, insertResultForLiveCredential, listExpiredResults, type ResultRow } from '../db/results';
import { FORMATS } from '../image/formats/index';
import type { OperationKind, ProcessedResult } from '../image/operations';
import type { ResultTarget } from '../image/result-sink';
import type { ImageFormat } from '../image/types';
import { toHex } from '../hex';
import { attachmentDisposition, resultFilename } from './filename';
import { uploadTarget, type ObjectMetadata, type ResultUpload } from './result-upload';

export function objectKey(uuid: string): string {
  return `results/${uuid}`;
}

/** 128 random bits as 32 lowercase hex characters: the capability in the download link. */
export function newResultId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

export function downloadPath(row: Pick<ResultRow, 'uuid' | 'format' | 'filename'>): string {
  return `/download/${row.uuid}/${row.format}/${encodeURIComponent(row.filename)}`;
}

export interface ResultInput {
  userId: number;
  operation: OperationKind;
  uploadName: string;
  /** Checked again, on the D1 primary, by the insert of the record. */
  credential: Credential;
  now: Date;
  expiresAt: Date;
}

type Bindings = { DB: D1Database; RESULTS: R2Bucket };

/**
 * What a result's R2 object carries besides its bytes: the headers a download sends, and the
 * record's facts a download needs (format, filename, expiry), so that no download waits for D1.
 */
export interface ResultFacts {
  format: string;
  filename: string;
  expires_at: string;
}

function objectMetadata(format: ImageFormat, uploadName: string, expiresAt: Date): ObjectMetadata {
  const info = FORMATS[format];
  const filename = resultFilename(uploadName, info.extension);
  const facts: ResultFacts = { format: info.name, filename, expires_at: expiresAt.toISOString() };
  return { httpMetadata: { contentType: info.mimeType, contentDisposition: attachmentDisposition(filename) }, customMetadata: { ...facts } };
}

/** Where a run streams the result with id `uuid` (result-upload.ts), named after the upload. */
export function resultTarget(bindings: Bindings, uuid: string, input: Pick<ResultInput, 'uploadName' | 'expiresAt'>, signal?: AbortSignal): ResultTarget & { upload: () => ResultUpload | null } {
  return uploadTarget(bindings.RESULTS, objectKey(uuid), (format) => objectMetadata(format, input.uploadName, input.expiresAt), signal);
}

export interface StoredResult {
  row: ResultRow;
  image: ProcessedResult;
  object: R2Object;
  /** The file, when it was small enough to be stored in one piece (kept for this location's cache). */
  bytes: Uint8Array | null;
}

/**
 * Runs `run` into `target` (resultTarget for `uuid`), then completes the file in R2 and writes its
 * record together: one far round trip, not two. The record's insert also checks, on the D1 primary,
 * that the caller's key or session is still live. If either fails, the other is taken back, and
 * so is a run or upload that fails (the upload is aborted): neither file nor parts nor record
 * remain. `hold` counts what the upload still holds while it completes (admission).
 */
export async function storeResult(
  bindings: Bindings,
  input: ResultInput & { uuid: string },
  target: ReturnType<typeof resultTarget>,
  run: (target: ResultTarget) => Promise<ProcessedResult>,
  hold: (bytes: number) => () => void = () => () => {},
): Promise<StoredResult> {
  let image: ProcessedResult;
  try {
    image = await run(target);
  } catch (error) {
    await target.upload()?.abort();
    throw error;
  }
  const upload = target.upload()!;
  const row = resultRow(input, image, upload.length);
  const release = hold(upload.heldBytes);
  const [stored, recorded] = await Promise.allSettled([
    upload.finish().finally(release),
    insertResultForLiveCredential(bindings.DB, row, input.credential, input.now),
  ]);
  if (stored.status === 'fulfilled' && recorded.status === 'fulfilled' && recorded.value) {
    return { row, image, object: stored.value, bytes: upload.singlePutBytes };
  }
  await Promise.all([
    stored.status === 'fulfilled' ? bindings.RESULTS.delete(objectKey(input.uuid)) : upload.abort(),
    recorded.status === 'fulfilled' && recorded.value ? deleteResults(bindings.DB, [input.uuid]) : undefined,
  ]);
  if (stored.status === 'rejected') throw stored.reason;
  if (recorded.status === 'rejected') throw recorded.reason;
  throw credentialRefused(input.credential.kind);
}

function resultRow(input: ResultInput & { uuid: string }, image: ProcessedResult, size: number): ResultRow {
  const info = FORMATS[image.format];
  return {
    uuid: input.uuid,
    user_id: input.userId,
    operation: input.operation,
    format: info.name,
    filename: resultFilename(input.uploadName, info.extension),
    size,
    width: image.width,
    height: image.height,
    created_at: input.now.toISOString(),
    expires_at: input.expiresAt.toISOString(),
  };
}

/** Deletes one result, file and record; a result that was never (or only partly) stored is no error. */
export async function deleteResult(bindings: { DB: D1Database; RESULTS: R2Bucket }, uuid: string): Promise<void> {
  await bindings.RESULTS.delete(objectKey(uuid));
  await deleteResults(bindings.DB, [uuid]);
}

/** The scheduled cleanup: expired files and their records are deleted, not only hidden. */
export async function deleteExpiredResults(bindings: { DB: D1Database; RESULTS: R2Bucket }, now: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const uuids = await listExpiredResults(bindings.DB, now, 500);
    if (uuids.length === 0) return deleted;
    await bindings.RESULTS.delete(uuids.map(objectKey));
    await deleteResults(bindings.DB, uuids);
    deleted += uuids.length;
  }
}
