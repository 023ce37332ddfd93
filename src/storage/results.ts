import { deleteResults, insertResult, listExpiredResults, type ResultRow } from '../db/results';
import { FORMATS } from '../image/formats/index';
import type { OperationKind, ProcessedImage } from '../image/operations';
import { toHex } from '../hex';
import { attachmentDisposition, resultFilename } from './filename';

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

/** Writes the file to R2 first, then its record; the link is only handed out once both exist. */
export async function saveResult(
  bindings: { DB: D1Database; RESULTS: R2Bucket },
  input: { userId: number; operation: OperationKind; image: ProcessedImage; uploadName: string; retentionMs: number; now: Date; uuid?: string },
): Promise<ResultRow> {
  const info = FORMATS[input.image.format];
  const uuid = input.uuid ?? newResultId();
  const filename = resultFilename(input.uploadName, info.extension);
  const expiresAt = new Date(input.now.getTime() + input.retentionMs);
  const object = await bindings.RESULTS.put(objectKey(uuid), input.image.bytes, {
    httpMetadata: { contentType: info.mimeType, contentDisposition: attachmentDisposition(filename) },
  });
  const row: ResultRow = {
    uuid,
    user_id: input.userId,
    operation: input.operation,
    format: info.name,
    filename,
    size: object.size,
    width: input.image.width,
    height: input.image.height,
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
  return row;
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
