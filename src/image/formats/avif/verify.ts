import { damaged } from '../../bytes';
import type { Dimensions } from '../../types';
import { parseAvifContainer, show, type Av1Image, type AvifContainer } from './container';
import { readSequenceHeader, type SequenceHeader } from './sequence-header';

/**
 * Where an item's AV1 sequence header is looked for: encoders write it as the first OBU, and libavif
 * searches the first 4096 bytes too. Reading only this much keeps the check cheap for any file.
 */
const HEAD_BYTES = 4096;

/**
 * Everything about an AVIF file that can be checked without decoding pixels, the same checks for
 * every path (decode, and the lossless metadata strip, which must not answer for a file a decode
 * would refuse): the container as the decoder reads it (parseAvifContainer: structure, limits,
 * grid, alpha), and the AV1 sequence header of every image it would decode, which must promise
 * frames of exactly the declared size. (Its format may differ from av1C's: real files have wrong
 * av1C boxes, e.g. link-u's 12-bit 4:2:2 sample says 4:4:4, and libavif decodes what the stream
 * says; so does this decoder.) Returns the parsed container.
 * Damage and unsupported features throw AppError UNSUPPORTED_FORMAT.
 */
export function verifyAvifContainer(bytes: Uint8Array): AvifContainer {
  return checkedContainer(bytes, true);
}

/**
 * The container with no AV1 stream able to make frames larger than declared, for the header size
 * (readAvifDimensions): the size the pixel limit checks then bounds what decoding can allocate. A
 * stream smaller than declared is left to verifyAvifContainer, which the pipeline runs after the
 * pixel limit, so a file declaring a huge size is FILE_TOO_LARGE whatever lies behind it.
 */
export function avifContainerWithinDeclaredSizes(bytes: Uint8Array): AvifContainer {
  return checkedContainer(bytes, false);
}

function checkedContainer(bytes: Uint8Array, exact: boolean): AvifContainer {
  const container = parseAvifContainer(bytes);
  for (const layer of [container.color, container.alpha]) {
    if (!layer) continue;
    layer.tiles.forEach((image, index) => {
      const sequence = verifyAv1Image(bytes, image, exact);
      if (index === 0) layer.sequence = sequence;
    });
  }
  return container;
}

/** Checks an image's AV1 sequence headers; returns the one in its data (null when its head holds none). */
function verifyAv1Image(bytes: Uint8Array, image: Av1Image, exact: boolean): SequenceHeader | null {
  const head = imageHead(bytes, image);
  const fromData = readSequenceHeader(head);
  if (!fromData && head.length === image.byteLength) throw damaged(`avif: image ${image.id} has no AV1 sequence header`);
  if (fromData) checkSequence(image, 'data', fromData, exact);
  const { start, end } = image.config.obus;
  const fromConfig = end > start ? readSequenceHeader(bytes.subarray(start, end)) : null;
  if (fromConfig) checkSequence(image, 'av1C', fromConfig, exact);
  return fromData;
}

function checkSequence(image: Av1Image, where: string, sequence: SequenceHeader, exact: boolean): void {
  const max: Dimensions = { width: sequence.maxWidth, height: sequence.maxHeight };
  const fits = max.width <= image.size.width && max.height <= image.size.height;
  if (fits && (!exact || (max.width === image.size.width && max.height === image.size.height))) return;
  // Larger: frames could exceed what the size checks allowed; smaller: they cannot fill the image.
  const relation = fits ? 'smaller' : 'larger';
  throw damaged(`avif: image ${image.id} ${where} AV1 max frame ${show(max)} is ${relation} than its ${image.sizeFrom} ${show(image.size)}`);
}

const scratch = new Uint8Array(HEAD_BYTES);

/** The first HEAD_BYTES of an image's data: a view for one long range, else joined in a scratch buffer. */
function imageHead(bytes: Uint8Array, image: Av1Image): Uint8Array {
  const first = image.ranges[0];
  if (first.end - first.start >= HEAD_BYTES || image.ranges.length === 1) return bytes.subarray(first.start, Math.min(first.end, first.start + HEAD_BYTES));
  let filled = 0;
  for (const { start, end } of image.ranges) {
    const part = bytes.subarray(start, Math.min(end, start + HEAD_BYTES - filled));
    scratch.set(part, filled);
    filled += part.length;
    if (filled === HEAD_BYTES) break;
  }
  return scratch.subarray(0, filled);
}
