import { FORMATS } from '../formats/index';
import { encodeToBytes } from '../result-buffer';
import { pictureRows } from '../stages/rows';
import type { ImageFormat, RgbaImage } from '../types';
import { scoreRows } from './score-rows';

/**
 * How a quality is tried on the sample: the mosaic encoded by the format's own encoder (what the
 * whole picture will be encoded by, with the effort it takes for the whole picture's
 * `picturePixels`: AVIF's speed), decoded by its own decoder, and scored against the mosaic;
 * `traits` are the rows' (a grey picture is encoded as grey). Returns the score and the encoded size.
 */
export function sampleTrial(
  format: ImageFormat,
  mosaic: RgbaImage & { data: Uint8Array },
  traits: { alpha: boolean; grey?: boolean },
  picturePixels = mosaic.width * mosaic.height,
): (quality: number) => Promise<{ score: number; bytes: number }> {
  const { encoder } = FORMATS[format];
  const rows = { model: 'rgba' as const, alpha: traits.alpha, grey: traits.grey ?? false };
  return async (quality) => {
    // Encoders may change bands in place: each trial gets its own copy of the mosaic.
    const file = await encodeToBytes(encoder, pictureRows({ ...mosaic, data: mosaic.data.slice() }, rows), { quality, orientation: 1, effortPixels: picturePixels });
    const decoded = await FORMATS[format].read(file).decode({ shrink: 1, region: null });
    const score = await scoreRows(pictureRows(mosaic, rows), decoded);
    return { score, bytes: file.byteLength };
  };
}
