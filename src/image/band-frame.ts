import type { Orientation } from './exif';
import type { Region } from './operations';
import { pixelWords } from './pixels';
import type { Dimensions, RgbaImage } from './types';

/**
 * The frame a banded decode fills: bands of stored rows arrive one at a time and are written
 * straight to where a viewer sees them (EXIF orientation applied), keeping only the pixels inside
 * `region` (in displayed coordinates). So a rotated or cropped photo never needs a second
 * full-size frame: the frame is allocated once, at the size of the result.
 */
export class BandFrame {
  readonly image: RgbaImage;
  private readonly words: Int32Array;

  constructor(
    private readonly stored: Dimensions,
    private readonly orientation: Orientation | number,
    private readonly region: Region,
  ) {
    const data = new Uint8Array(region.width * region.height * 4);
    this.image = { data, width: region.width, height: region.height };
    this.words = new Int32Array(data.buffer);
  }

  /** Stored rows `y`..`y + rows - 1` that this frame needs at all (a crop may need fewer). */
  neededRows(): { first: number; last: number } {
    const { height: h } = this.stored;
    const { x, y, width, height } = this.region;
    // Displayed rows come from stored rows for orientations 1-4, displayed columns for 5-8;
    // 3, 4, 6 and 7 count them from the bottom of the stored image.
    const [from, to] = this.orientation >= 5 ? [x, x + width - 1] : [y, y + height - 1];
    const fromBottom = [3, 4, 6, 7].includes(this.orientation);
    return fromBottom ? { first: h - 1 - to, last: h - 1 - from } : { first: from, last: to };
  }

  /** Writes stored rows starting at `y` (RGBA, full stored width). */
  place(band: Uint8Array | Uint8ClampedArray, y: number, rows: number): void {
    const source = pixelWords(band);
    const { width: w, height: h } = this.stored;
    const { x: rx, y: ry, width: rw, height: rh } = this.region;
    for (let row = 0; row < rows; row++) {
      const sy = y + row;
      // Displayed position of stored (sx, sy) is (dx0 + sx * stepX, dy0 + sx * stepY).
      let dx0: number, dy0: number, stepX: number, stepY: number;
      switch (this.orientation) {
        case 2: [dx0, dy0, stepX, stepY] = [w - 1, sy, -1, 0]; break;
        case 3: [dx0, dy0, stepX, stepY] = [w - 1, h - 1 - sy, -1, 0]; break;
        case 4: [dx0, dy0, stepX, stepY] = [0, h - 1 - sy, 1, 0]; break;
        case 5: [dx0, dy0, stepX, stepY] = [sy, 0, 0, 1]; break;
        case 6: [dx0, dy0, stepX, stepY] = [h - 1 - sy, 0, 0, 1]; break;
        case 7: [dx0, dy0, stepX, stepY] = [h - 1 - sy, w - 1, 0, -1]; break;
        case 8: [dx0, dy0, stepX, stepY] = [sy, w - 1, 0, -1]; break;
        default: [dx0, dy0, stepX, stepY] = [0, sy, 1, 0];
      }
      // The stored columns whose displayed position falls inside the region.
      let first = 0;
      let last = w - 1;
      if (stepX !== 0) {
        if (dy0 < ry || dy0 >= ry + rh) continue;
        [first, last] = columnsInside(dx0, stepX, rx, rw, w);
      } else {
        if (dx0 < rx || dx0 >= rx + rw) continue;
        [first, last] = columnsInside(dy0, stepY, ry, rh, w);
      }
      if (first > last) continue;
      const stride = stepX !== 0 ? stepX : stepY * rw;
      let target = (dy0 + first * stepY - ry) * rw + (dx0 + first * stepX - rx);
      const rowStart = row * w;
      for (let sx = first; sx <= last; sx++, target += stride) this.words[target] = source[rowStart + sx];
    }
  }
}

/** The stored columns [first, last] for which origin + column * step lies in [start, start + size). */
function columnsInside(origin: number, step: number, start: number, size: number, width: number): [number, number] {
  if (step > 0) return [Math.max(0, start - origin), Math.min(width - 1, start + size - 1 - origin)];
  return [Math.max(0, origin - (start + size - 1)), Math.min(width - 1, origin - start)];
}
