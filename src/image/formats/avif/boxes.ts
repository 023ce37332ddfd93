import { damaged, fourCC, u32be } from '../../bytes';
import { AVIF_LIMITS, tooMany } from './limits';

export interface IsoBox {
  type: string;
  /** Offset of the box header. */
  start: number;
  /** Offset of the box body (after size, type and any 64-bit size). */
  body: number;
  /** Offset just after the box. */
  end: number;
}

/**
 * Walks the boxes in bytes [from, to). A box that claims more than the space left throws `damaged`
 * when the walk reaches it; size 0 means "to the end", size 1 a 64-bit size.
 */
export function* isoBoxes(bytes: Uint8Array, from: number, to: number): Generator<IsoBox> {
  let at = from;
  while (at < to) {
    if (to - at < 8) throw damaged(`avif: ${to - at} stray bytes at ${at}`);
    let size = u32be(bytes, at);
    const type = fourCC(bytes, at + 4);
    let body = at + 8;
    if (size === 1) {
      if (to - at < 16) throw damaged('avif: short 64-bit box size');
      size = u32be(bytes, at + 8) * 2 ** 32 + u32be(bytes, at + 12);
      body = at + 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < body - at || size > to - at) throw damaged(`avif: box ${JSON.stringify(type)} size ${size}`);
    yield { type, start: at, body, end: at + size };
    at += size;
  }
}

/** The first child box of `type` inside `parent` (skipping `skip` bytes of full-box header), or null. */
export function findBox(bytes: Uint8Array, parent: { body: number; end: number }, type: string, skip = 0): IsoBox | null {
  for (const box of isoBoxes(bytes, parent.body + skip, parent.end)) if (box.type === type) return box;
  return null;
}

/**
 * The child boxes of `parent` (after `skip` bytes of full-box header), refused once there are more
 * than `limit`: the walk stops at the first child over the limit, so its cost is bounded by the
 * limit, not by what the file declares.
 */
export function childBoxes(bytes: Uint8Array, parent: { type?: string; body: number; end: number }, skip = 0, limit: number = AVIF_LIMITS.childrenPerBox): IsoBox[] {
  const children: IsoBox[] = [];
  for (const box of isoBoxes(bytes, parent.body + skip, parent.end)) {
    if (children.length === limit) throw tooMany(`boxes in one ${parent.type ?? 'file'}`, null, limit);
    children.push(box);
  }
  return children;
}

/** The only child of `type`, or null; two are damage (readers would disagree on which one counts). */
export function singleChild(children: readonly IsoBox[], type: string): IsoBox | null {
  let found: IsoBox | null = null;
  for (const child of children) {
    if (child.type !== type) continue;
    if (found) throw damaged(`avif: two ${type} boxes`);
    found = child;
  }
  return found;
}

/** Reads fields of one box in order; reading past the box's end is damage. */
export class FieldReader {
  constructor(
    private readonly bytes: Uint8Array,
    public at: number,
    private readonly end: number,
    private readonly what: string,
  ) {}

  static of(bytes: Uint8Array, box: IsoBox, skip = 0): FieldReader {
    return new FieldReader(bytes, box.body + skip, box.end, box.type);
  }

  get remaining(): number {
    return this.end - this.at;
  }

  private take(size: number): number {
    if (size > this.end - this.at) throw damaged(`avif: ${this.what} is truncated`);
    const at = this.at;
    this.at += size;
    return at;
  }

  u8(): number {
    return this.bytes[this.take(1)];
  }

  u16(): number {
    const at = this.take(2);
    return (this.bytes[at] << 8) | this.bytes[at + 1];
  }

  u32(): number {
    const at = this.take(4);
    const b = this.bytes;
    return b[at] * 0x1000000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);
  }

  i32(): number {
    const value = this.u32();
    return value >= 2 ** 31 ? value - 2 ** 32 : value;
  }

  /** An unsigned field of 0, 4 or 8 bytes (iloc); values of 2^53 and above are damage. */
  uint(size: number): number {
    if (size === 0) return 0;
    if (size === 4) return this.u32();
    if (size === 8) {
      const high = this.u32();
      if (high >= 2 ** 21) throw damaged(`avif: ${this.what} has a 64-bit value past 2^53`);
      return high * 2 ** 32 + this.u32();
    }
    throw damaged(`avif: ${this.what} field size ${size}`);
  }

  fourCC(): string {
    return fourCC(this.bytes, this.take(4));
  }

  skip(size: number): void {
    this.take(size);
  }

  /** A null-terminated string (at most the rest of the box), as Latin-1. */
  cString(): string {
    const start = this.at;
    let end = start;
    while (end < this.end && this.bytes[end] !== 0) end++;
    if (end === this.end) throw damaged(`avif: ${this.what} string is not terminated`);
    this.at = end + 1;
    let text = '';
    for (let i = start; i < end && i - start < 256; i++) text += String.fromCharCode(this.bytes[i]);
    return text;
  }
}
