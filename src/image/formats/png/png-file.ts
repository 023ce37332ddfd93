import type { ResultSink } from '../../result-sink';
import { PNG_SIGNATURE } from './header';
import { CRC_START, crcUpdate, crcValue } from './crc';

/** Largest IDAT chunk written: 12 bytes of framing per 64 KiB is 0.02%; readers take any size. */
export const IDAT_BYTES = 64 * 1024;
/**
 * A PNG file written front to back into a result sink: the signature and IHDR, the compressed
 * image data framed as IDAT chunks as it arrives (each chunk assembled with its length and CRC in
 * a scratch buffer, then written), IEND.
 */
export class PngFileWriter {
  /** One chunk being assembled: length, type, data, CRC. */
  private readonly scratch: Uint8Array;
  private idatUsed = 0;

  constructor(
    private readonly output: ResultSink,
    private readonly idatBytes = IDAT_BYTES,
  ) {
    this.scratch = new Uint8Array(12 + idatBytes);
  }

  /** Signature and IHDR for 8-bit samples, no interlace. */
  writeHeader(width: number, height: number, colourType: number): void {
    this.output.write(Uint8Array.from(PNG_SIGNATURE));
    const ihdr = this.scratch.subarray(8, 8 + 13);
    const view = new DataView(ihdr.buffer, ihdr.byteOffset, 13);
    view.setUint32(0, width);
    view.setUint32(4, height);
    ihdr.set([8, colourType, 0, 0, 0], 8);
    this.writeChunk('IHDR', 13);
  }

  /** Appends compressed image data, in IDAT chunks of at most `idatBytes`. */
  appendImageData(data: Uint8Array): void {
    let at = 0;
    while (at < data.length) {
      const n = Math.min(this.idatBytes - this.idatUsed, data.length - at);
      this.scratch.set(data.subarray(at, at + n), 8 + this.idatUsed);
      this.idatUsed += n;
      at += n;
      if (this.idatUsed === this.idatBytes) this.flushImageData();
    }
  }

  /** Writes the last IDAT and IEND. */
  finish(): void {
    this.flushImageData();
    this.writeChunk('IEND', 0);
  }

  private flushImageData(): void {
    if (this.idatUsed === 0) return;
    this.writeChunk('IDAT', this.idatUsed);
    this.idatUsed = 0;
  }

  /** Frames the `length` bytes at scratch[8] as a chunk of `type` and appends it. */
  private writeChunk(type: string, length: number): void {
    const view = new DataView(this.scratch.buffer, this.scratch.byteOffset);
    view.setUint32(0, length);
    for (let i = 0; i < 4; i++) this.scratch[4 + i] = type.charCodeAt(i);
    view.setUint32(8 + length, crcValue(crcUpdate(CRC_START, this.scratch, 4, 8 + length)));
    this.output.write(this.scratch.subarray(0, 12 + length));
  }
}
