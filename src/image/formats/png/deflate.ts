/**
 * The platform's zlib deflate (CompressionStream, level 6 in workerd and Node, the level of
 * sharp's default `png()`), fed filtered rows and drained as it goes: every compressed byte is
 * handed to `onOutput` as soon as the stream gives it out.
 */
export class Deflater {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly drained: Promise<void>;
  private failure: unknown = null;
  private closed = false;

  constructor(onOutput: (bytes: Uint8Array) => void, readBytes = 64 * 1024) {
    const stream = new CompressionStream('deflate');
    this.writer = stream.writable.getWriter();
    const readable = stream.readable as ReadableStream<Uint8Array>;
    this.drained = drain(readable, onOutput, readBytes).catch((error: unknown) => {
      this.failure ??= error;
    });
  }

  /**
   * Compresses `bytes`; the caller may reuse them once this resolves. The stream gets a copy: Node's
   * CompressionStream still reads a chunk after its write has resolved (a reused batch came out as
   * other rows' bytes), and nothing promises workerd's will not.
   */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.failure !== null) throw this.failure;
    await this.writer.write(bytes.slice());
  }

  /** Ends the stream and waits until all compressed bytes were handed out. */
  async finish(): Promise<void> {
    this.closed = true;
    await this.writer.close();
    await this.drained;
    if (this.failure !== null) throw this.failure;
  }

  /** Stops early (an error elsewhere); safe after finish. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    this.writer.abort().catch(() => {});
  }
}

/** Reads the stream to its end: BYOB into one reused buffer where supported (workerd), else Node's chunks. */
async function drain(readable: ReadableStream<Uint8Array>, onOutput: (bytes: Uint8Array) => void, readBytes: number): Promise<void> {
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = readable.getReader({ mode: 'byob' });
  } catch {
    byob = null;
  }
  if (byob) {
    let buffer = new ArrayBuffer(readBytes);
    for (;;) {
      const { done, value } = await byob.read(new Uint8Array(buffer));
      if (done) return;
      onOutput(value);
      buffer = value.buffer as ArrayBuffer;
    }
  }
  const reader = readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onOutput(value);
  }
}
