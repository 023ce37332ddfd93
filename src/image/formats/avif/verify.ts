import { damaged } from '../../bytes';
import type { Dimensions } from '../../types';
import { show, type Av1Image, type AvifContainer } from './container';
import { firstFrameMayCopyIntraBlocks, readSequenceHeader, type SequenceHeader } from './sequence-header';

/**
 * Where an item's AV1 sequence header is looked for: encoders write it as the first OBU, and libavif
 * searches the first 4096 bytes too. Reading only this much keeps the check cheap for any file.
 */
const HEAD_BYTES = 4096;

/**
 * Reads the AV1 sequence header of every image the decoder would decode (of its data, and of its
 * av1C's configOBUs), for the header: none may promise frames larger than its declared size, so the
 * size the pixel limit checks bounds what decoding can allocate. (Its format may differ from av1C's:
 * real files have wrong av1C boxes, e.g. link-u's 12-bit 4:2:2 sample says 4:4:4, and libavif
 * decodes what the stream says; so does this decoder.) Each image keeps what it found, and whether
 * its frame header lets it use intra block copy.
 */
export function readSequenceHeaders(bytes: Uint8Array, container: AvifContainer): void {
  for (const image of images(container)) {
    const head = imageHead(bytes, image);
    image.sequence = readSequenceHeader(head);
    if (!image.sequence && head.length === image.byteLength) throw damaged(`avif: image ${image.id} has no AV1 sequence header`);
    image.mayCopyIntraBlocks = !image.sequence || firstFrameMayCopyIntraBlocks(head, image.sequence);
    const { start, end } = image.config.obus;
    image.configSequence = end > start ? readSequenceHeader(bytes.subarray(start, end)) : null;
    for (const [where, sequence] of [['data', image.sequence], ['av1C', image.configSequence]] as const) {
      if (sequence) checkSequence(image, where, sequence, false);
    }
  }
}

/**
 * The container checks after the pixel limit, the same for every path (decode, and the lossless
 * strip, which must not answer for a file a decode would refuse): every AV1 stream must promise
 * frames of exactly its declared size (a smaller one cannot fill it). A file declaring a huge size
 * is so FILE_TOO_LARGE whatever lies behind it.
 */
export function verifyAv1Sizes({ container }: { container: AvifContainer }): void {
  for (const image of images(container)) {
    for (const [where, sequence] of [['data', image.sequence], ['av1C', image.configSequence]] as const) {
      if (sequence) checkSequence(image, where, sequence, true);
    }
  }
}

function* images(container: AvifContainer): Generator<Av1Image> {
  for (const layer of [container.color, container.alpha]) yield* layer?.tiles ?? [];
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
