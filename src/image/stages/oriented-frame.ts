import type { Orientation } from '../exif';
import { pixelWords } from './pixels';
import type { Dimensions } from '../types';

/**
 * A frame that stored rows are written into where a viewer sees them (EXIF orientation applied),
 * for the one case a band pipeline cannot stream: an output written top to bottom from an image
 * whose displayed rows are stored bottom-up (3, 4) or as columns (5-8). It is held in the most
 * compact form the pixels allow: 1 byte a pixel for opaque grey, 3 for opaque colour, 4 with alpha.
 */
export class OrientedFrame {
  readonly width: number;
  readonly height: number;
  readonly channels: 1 | 3 | 4;
  readonly bytes: Uint8Array;

  constructor(
    private readonly stored: Dimensions,
    private readonly orientation: Orientation | number,
    traits: { alpha: boolean; grey: boolean },
  ) {
    const transposed = orientation >= 5;
    this.width = transposed ? stored.height : stored.width;
    this.height = transposed ? stored.width : stored.height;
    this.channels = orientedFrameChannels(traits);
    this.bytes = new Uint8Array(this.width * this.height * this.channels);
  }

  /** Writes stored rows y..y+rows-1 (RGBA, full stored width) to their displayed places. */
  place(band: Uint8Array, y: number, rows: number): void {
    const words = pixelWords(band);
    const { width: w, height: h } = this.stored;
    if (this.orientation < 5) {
      for (let row = 0; row < rows; row++) {
        const sy = y + row;
        const dy = this.orientation >= 3 ? h - 1 - sy : sy;
        const mirrored = this.orientation === 2 || this.orientation === 3;
        this.writeRun(words, row * w, 1, w, dy * this.width + (mirrored ? w - 1 : 0), mirrored ? -1 : 1);
      }
      return;
    }
    // 5-8: stored column sx becomes displayed row dy; the band's rows become a run of columns.
    const forward = this.orientation === 5 || this.orientation === 8; // displayed x grows with stored y
    const dx = forward ? y : h - 1 - y;
    for (let sx = 0; sx < w; sx++) {
      const dy = this.orientation <= 6 ? sx : w - 1 - sx;
      this.writeRun(words, sx, w, rows, dy * this.width + dx, forward ? 1 : -1);
    }
  }

  /** Displayed rows y..y+rows-1 as RGBA into `out`. */
  readRows(y: number, rows: number, out: Uint8Array): void {
    const { bytes, channels } = this;
    const count = rows * this.width;
    const words = pixelWords(out);
    let s = y * this.width * channels;
    if (channels === 4) return out.set(bytes.subarray(s, s + count * 4));
    for (let i = 0; i < count; i++, s += channels) {
      const r = bytes[s];
      words[i] = channels === 1 ? r | (r << 8) | (r << 16) | (255 << 24) : r | (bytes[s + 1] << 8) | (bytes[s + 2] << 16) | (255 << 24);
    }
  }

  /** `count` source words from `from`, `step` apart, to displayed pixels from `to`, `direction` apart. */
  private writeRun(words: Int32Array, from: number, step: number, count: number, to: number, direction: 1 | -1): void {
    const { bytes, channels } = this;
    for (let i = 0, s = from, d = to * channels; i < count; i++, s += step, d += direction * channels) {
      const px = words[s];
      bytes[d] = px & 255;
      if (channels === 1) continue;
      bytes[d + 1] = (px >> 8) & 255;
      bytes[d + 2] = (px >> 16) & 255;
      if (channels === 4) bytes[d + 3] = px >>> 24;
    }
  }
}

export function orientedFrameChannels(traits: { alpha: boolean; grey: boolean }): 1 | 3 | 4 {
  return traits.alpha ? 4 : traits.grey ? 1 : 3;
}
