import { PNG_SIGNATURE } from '../sniff';
import { CRC_START, crcUpdate, crcValue } from './crc';

/** Largest IDAT chunk written: 12 bytes of framing per 64 KiB is 0.02%; readers take any size. */
export const IDAT_BYTES = 64 * 1024;
/** The file grows in steps of this much (a resizable buffer grows in place, without copying). */
const GROWTH_BYTES = 1 << 20;

/** ES2024 resizable ArrayBuffer, which the project's ES2023 typings lack; workerd and Node have it. */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
  readonly maxByteLength: number;
}
const ResizableBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

/**
 * A PNG file written front to back into one resizable buffer: the signature and IHDR, the
 * compressed image data framed as IDAT chunks as it arrives (CRCs computed on the way), IEND.
 * The buffer reserves `maxBytes` of address space and commits only what is written, so the file
 * is never held twice (no list of pieces joined at the end).
 */
export class PngFileWriter {
  private readonly buffer: ResizableArrayBuffer;
  private bytes: Uint8Array;
  private length = 0;
  /** Offset of the open IDAT chunk's length field, or -1. */
  private idat = -1;
  private crc = CRC_START;

  constructor(
    maxBytes: number,
    private readonly idatBytes = IDAT_BYTES,
  ) {
    this.buffer = new ResizableBuffer(Math.min(maxBytes, GROWTH_BYTES), { maxByteLength: maxBytes });
    this.bytes = new Uint8Array(this.buffer);
  }

  /** Signature and IHDR for 8-bit samples, no interlace. */
  writeHeader(width: number, height: number, colourType: number): void {
    this.append(Uint8Array.from(PNG_SIGNATURE));
    const ihdr = new Uint8Array(13);
    const view = new DataView(ihdr.buffer);
    view.setUint32(0, width);
    view.setUint32(4, height);
    ihdr.set([8, colourType, 0, 0, 0], 8);
    this.chunk('IHDR', ihdr);
  }

  /** Appends compressed image data, opening and closing IDAT chunks of at most `idatBytes`. */
  appendImageData(data: Uint8Array): void {
    let at = 0;
    while (at < data.length) {
      if (this.idat < 0) this.openChunk('IDAT');
      const room = this.idatBytes - (this.length - this.idat - 8);
      const n = Math.min(room, data.length - at);
      this.append(data.subarray(at, at + n));
      at += n;
      if (n === room) this.closeChunk();
    }
  }

  /** Closes the last IDAT, writes IEND and returns the file (a view of the writer's buffer). */
  finish(): Uint8Array {
    if (this.idat >= 0) this.closeChunk();
    this.chunk('IEND', new Uint8Array(0));
    this.buffer.resize(this.length);
    return new Uint8Array(this.buffer, 0, this.length);
  }

  byteLength(): number {
    return this.buffer.byteLength;
  }

  private chunk(type: string, data: Uint8Array): void {
    this.openChunk(type);
    this.append(data);
    this.closeChunk();
  }

  private openChunk(type: string): void {
    this.idat = this.length;
    this.append(new Uint8Array(8));
    for (let i = 0; i < 4; i++) this.bytes[this.idat + 4 + i] = type.charCodeAt(i);
    this.crc = crcUpdate(CRC_START, this.bytes, this.idat + 4, this.idat + 8);
  }

  private closeChunk(): void {
    const start = this.idat;
    const dataLength = this.length - start - 8;
    const crc = crcValue(crcUpdate(this.crc, this.bytes, start + 8, this.length));
    this.append(new Uint8Array(4));
    const view = new DataView(this.buffer);
    view.setUint32(start, dataLength);
    view.setUint32(this.length - 4, crc);
    this.idat = -1;
  }

  private append(data: Uint8Array): void {
    const end = this.length + data.length;
    if (end > this.buffer.byteLength) {
      if (end > this.buffer.maxByteLength) throw new Error(`png: file over its bound of ${this.buffer.maxByteLength} bytes`);
      this.buffer.resize(Math.min(this.buffer.maxByteLength, Math.max(end, this.buffer.byteLength + GROWTH_BYTES)));
    }
    this.bytes.set(data, this.length);
    this.length = end;
  }
}
