import { damaged } from '../bytes';
import { EOI, SOS, isStartOfFrame, jpegSegments } from '../header/jpeg';

/** Number of colour components in the first frame header: 1 grey, 3 YCbCr/RGB, 4 CMYK/YCCK. */
export function jpegComponentCount(bytes: Uint8Array): number {
  for (const segment of jpegSegments(bytes)) {
    if (isStartOfFrame(segment.marker)) {
      if (segment.end - segment.payload < 6) throw damaged('jpeg: short SOF');
      return bytes[segment.payload + 5];
    }
    if (segment.marker === SOS || segment.marker === EOI) break;
  }
  throw damaged('jpeg: no SOF before the scan data');
}
