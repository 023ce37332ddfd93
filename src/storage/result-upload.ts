import { ClientClosedRequest } from '../errors';
import { ResultBuffer, resultTooLarge } from '../image/result-buffer';
import type { ResultSink, ResultTarget } from '../image/result-sink';

/**
 * R2's multipart parts must be at least 5 MiB except the last, and R2 wants them all the same
 * size: every part but the last is exactly this.
 */
export const RESULT_PART_BYTES = 5 * 2 ** 20;

/**
 * Bytes go to R2 in pieces of this size with a turn of the event loop between them (storeInPieces): local
 * R2 (wrangler dev's simulator) runs in the Worker's own process and takes a 5 MiB body in one go,
 * 100-110 ms during which no other request in the isolate moves; in pieces, 11-13 ms at a time.
 */
const PIECE_BYTES = 256 * 1024;

/** A part buffer grows in place a megabyte at a time (result-buffer.ts). */
const PART_GROWTH_BYTES = 2 ** 20;

/**
 * What an upload holds for a file of at most `fileBytes` written with at most `burstBytes` between
 * two drains: the part being filled (a megabyte of growth over what it holds) beside the parts a
 * burst filled, which are sent and held until stored; never more than the file (a part never
 * grows past what the file may still have), as a result held in memory would.
 */
export function uploadHeldBytes(fileBytes: number, burstBytes: number): number {
  return Math.min(fileBytes, RESULT_PART_BYTES + burstBytes + PART_GROWTH_BYTES);
}

/**
 * A result written to R2 as it is made: bytes gather in a part of RESULT_PART_BYTES and each full
 * part is sent at once through a multipart upload (created with the first full part); the
 * encoder's next drain waits until the parts sent are stored. A file that never fills a part is
 * one `put` at the end. A run that fails or is given up calls `abort()`: the multipart upload is
 * aborted and no part stays behind. Giving up (`signal`) is noticed at the next drain.
 */
export class ResultUpload implements ResultSink {
  private part: ResultBuffer;
  /** A finished file's tail, taken without copying (writeOwned), sent as the last part. */
  private ownedTail: Uint8Array | null = null;
  private upload: Promise<R2MultipartUpload> | null = null;
  private readonly parts: Promise<R2UploadedPart>[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private inFlightBytes = 0;
  private failure: unknown = null;
  private written = 0;
  private peak = 0;
  private aborted = false;
  private wholeFile: Uint8Array | null = null;
  /** Full parts not sent yet (they go at the next drain). */
  private readonly pending: Uint8Array[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    private readonly options: R2PutOptions & R2MultipartOptions,
    private readonly maxBytes: number,
    private readonly signal?: AbortSignal,
    private readonly pace?: () => Promise<void>,
  ) {
    this.part = this.newPart();
  }

  get length(): number {
    return this.written;
  }

  get heldBytes(): number {
    return this.part.heldBytes + (this.ownedTail?.byteLength ?? 0) + this.inFlightBytes;
  }

  get peakHeldBytes(): number {
    return this.peak;
  }

  /** The multipart upload's id once it exists (tests check that an aborted one is gone). */
  async uploadId(): Promise<string | null> {
    return this.upload ? (await this.upload).uploadId : null;
  }

  write(chunk: Uint8Array): void {
    this.count(chunk.byteLength);
    if (this.ownedTail) this.copyOwnedTail();
    let at = 0;
    while (at < chunk.byteLength) {
      const take = Math.min(RESULT_PART_BYTES - this.part.length, chunk.byteLength - at);
      this.part.write(chunk.subarray(at, at + take));
      at += take;
      if (this.part.length === RESULT_PART_BYTES) {
        this.queue(this.part.bytes());
        this.part = this.newPart();
      }
    }
    this.notePeak();
  }

  writeOwned(bytes: Uint8Array): void {
    if (this.part.length > 0 || this.ownedTail) return this.write(bytes);
    this.count(bytes.byteLength);
    let at = 0;
    for (; bytes.byteLength - at >= RESULT_PART_BYTES; at += RESULT_PART_BYTES) this.queue(bytes.subarray(at, at + RESULT_PART_BYTES));
    if (at < bytes.byteLength) this.ownedTail = bytes.subarray(at);
    this.notePeak();
  }

  async drain(): Promise<void> {
    if (this.pending.length > 0) {
      // Parts go out between a run's turns: a run gives way to the short requests in flight first,
      // whose own storage calls would otherwise queue behind a 5 MiB part.
      await this.pace?.();
      for (const bytes of this.pending.splice(0)) this.send(bytes);
    }
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    if (this.failure !== null) throw this.failure;
    if (this.signal?.aborted) throw new ClientClosedRequest();
  }

  /** The whole file, when it was stored in one `put` (it never filled a part), once `finish` has stored it. */
  get singlePutBytes(): Uint8Array | null {
    return this.wholeFile;
  }

  /** Stores the rest and completes the object; what R2 answers describes it. */
  async finish(): Promise<R2Object> {
    await this.drain();
    const rest = this.ownedTail ?? this.part.bytes();
    if (!this.upload) {
      const object = await storeInPieces(rest, (body) => this.bucket.put(this.key, body, this.options));
      this.wholeFile = rest;
      return object;
    }
    if (rest.byteLength > 0) this.queue(rest);
    await this.drain();
    const upload = await this.upload;
    return upload.complete(await Promise.all(this.parts));
  }

  /** Gives the upload up: waits for parts on their way, then aborts it; never throws. */
  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    for (const bytes of this.pending.splice(0)) this.inFlightBytes -= bytes.byteLength;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    if (!this.upload) return;
    try {
      await (await this.upload).abort();
    } catch {
      // Never created, or already gone: nothing is left behind either way.
    }
  }

  private newPart(): ResultBuffer {
    const filled = this.parts.length + this.pending.length;
    return new ResultBuffer(Math.min(RESULT_PART_BYTES, this.maxBytes - filled * RESULT_PART_BYTES));
  }

  private count(bytes: number): void {
    const end = this.written + bytes;
    if (end > this.maxBytes) throw resultTooLarge(this.maxBytes, end);
    this.written = end;
  }

  private copyOwnedTail(): void {
    const tail = this.ownedTail!;
    this.ownedTail = null;
    this.part.write(tail);
  }

  private notePeak(): void {
    this.peak = Math.max(this.peak, this.heldBytes);
  }

  /** A full part, held until the next drain sends it. */
  private queue(bytes: Uint8Array): void {
    if (this.aborted) throw new Error('the result upload was aborted');
    this.pending.push(bytes);
    this.inFlightBytes += bytes.byteLength;
  }

  private send(bytes: Uint8Array): void {
    this.upload ??= this.bucket.createMultipartUpload(this.key, this.options);
    const number = this.parts.length + 1;
    const size = bytes.byteLength;
    const part = this.upload.then((upload) => storeInPieces(bytes, (body) => upload.uploadPart(number, body)));
    this.parts.push(part);
    const settled = part.then(
      () => {},
      (error: unknown) => {
        this.failure ??= error;
      },
    );
    this.inFlight.add(settled);
    void settled.then(() => {
      this.inFlight.delete(settled);
      this.inFlightBytes -= size;
    });
  }
}

/** `store` given `bytes` as a stream written in pieces (see PIECE_BYTES); small ones go whole. */
async function storeInPieces<T>(bytes: Uint8Array, store: (body: ReadableStream | Uint8Array) => Promise<T>): Promise<T> {
  if (bytes.byteLength <= PIECE_BYTES) return store(bytes);
  const stream = new FixedLengthStream(bytes.byteLength);
  const stored = store(stream.readable);
  // A store that fails stops reading: its answer ends the wait for the writes.
  await Promise.race([writeInPieces(bytes, stream.writable.getWriter()), stored.then(noop, noop)]);
  return stored;
}

/**
 * A stream of known length (R2 wants one) that is written PIECE_BYTES at a time, with a turn of the
 * event loop between pieces (not the run's turn, which would also wait for short requests: the
 * last part is stored after the run has ended, when this request counts as one of them).
 */
async function writeInPieces(bytes: Uint8Array, writer: WritableStreamDefaultWriter<Uint8Array>): Promise<void> {
  try {
    for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) {
      await writer.write(bytes.subarray(at, at + PIECE_BYTES));
      if (at + PIECE_BYTES < bytes.byteLength) await macrotask();
    }
    await writer.close();
  } catch (error) {
    // The store call has failed or given up reading; its own rejection says why.
    await writer.abort(error).catch(() => {});
  }
}

const noop = () => {};

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** What an object is stored with: its HTTP headers and the facts a download needs without D1. */
export type ObjectMetadata = Pick<R2PutOptions, 'httpMetadata' | 'customMetadata'>;

/** A run's result target that streams the file to R2 under `key` with the metadata its format calls for. */
export function uploadTarget(
  bucket: R2Bucket,
  key: string,
  metadata: (format: Parameters<ResultTarget['open']>[0]) => ObjectMetadata,
  signal?: AbortSignal,
): ResultTarget & { upload: () => ResultUpload | null } {
  let upload: ResultUpload | null = null;
  return {
    heldBytes: uploadHeldBytes,
    open(format, maxBytes, pace) {
      upload = new ResultUpload(bucket, key, metadata(format), maxBytes, signal, pace);
      return upload;
    },
    upload: () => upload,
  };
}
