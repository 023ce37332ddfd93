import { deleteResults, insertResult, listExpiredResults, type ResultRow } from '../db/results';
import { FORMATS } from '../image/formats/index';
import type { OperationKind, ProcessedResult } from '../image/operations';
import type { ResultTarget } from '../image/result-sink';
import type { ImageFormat } from '../image/types';
import { toHex } from '../hex';
import { attachmentDisposition, resultFilename } from './filename';
import { uploadTarget, type ResultUpload } from './result-upload';

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
  retentionMs: number;
  now: Date;
}

type Bindings = { DB: D1Database; RESULTS: R2Bucket };

/** Where a run streams the result with id `uuid` (result-upload.ts), named after the upload. */
export function resultTarget(bindings: Bindings, uuid: string, uploadName: string, signal?: AbortSignal): ResultTarget & { upload: () => ResultUpload | null } {
  return uploadTarget(bindings.RESULTS, objectKey(uuid), (format) => httpMetadata(format, uploadName), signal);
}

function httpMetadata(format: ImageFormat, uploadName: string): R2HTTPMetadata {
  const info = FORMATS[format];
  return { contentType: info.mimeType, contentDisposition: attachmentDisposition(resultFilename(uploadName, info.extension)) };
}

/**
 * Runs `run` into `target` (resultTarget for `uuid`), completes the file in R2, then writes its
 * record: the link is only handed out once both exist. A run or upload that fails aborts the
 * upload, so neither file nor parts nor record remain. `hold` counts what the upload still holds
 * while it completes (admission).
 */
export async function storeResult(
  bindings: Bindings,
  input: ResultInput & { uuid: string },
  target: ReturnType<typeof resultTarget>,
  run: (target: ResultTarget) => Promise<ProcessedResult>,
  hold: (bytes: number) => () => void = () => () => {},
): Promise<{ row: ResultRow; image: ProcessedResult }> {
  const { uuid } = input;
  let image: ProcessedResult;
  let object: R2Object;
  try {
    image = await run(target);
    const upload = target.upload()!;
    const release = hold(upload.heldBytes);
    object = await upload.finish().finally(release);
  } catch (error) {
    await target.upload()?.abort();
    throw error;
  }
  const info = FORMATS[image.format];
  const filename = resultFilename(input.uploadName, info.extension);
  const expiresAt = new Date(input.now.getTime() + input.retentionMs);
  const row: ResultRow = {
    uuid,
    user_id: input.userId,
    operation: input.operation,
    format: info.name,
    filename,
    size: object.size,
    width: image.width,
    height: image.height,
    etag: object.httpEtag,
    created_at: input.now.toISOString(),
    expires_at: expiresAt.toISOString(),
  };
  try {
    await insertResult(bindings.DB, row);
  } catch (error) {
    await bindings.RESULTS.delete(objectKey(uuid));
    throw error;
  }
  return { row, image };
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
