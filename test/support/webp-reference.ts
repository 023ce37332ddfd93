/**
 * References for the WebP tests, outside the service's code: libwebp's own one-call decode of a
 * still file (through our build's module), the first frame of an animation as a standalone still
 * and a decoded frame placed on its canvas, whole.
 */
import { damaged, startsWith } from '../../src/image/bytes';
import type { WasmInstance } from '../../src/image/codecs/codec';
import { stillOf } from '../../src/image/formats/webp/first-frame';
import { readWebpDimensions, readWebpHeader, type FirstFrame } from '../../src/image/formats/webp/header';
import { heap, type Libwebp, openLibwebp, outOfMemory } from '../../src/image/formats/webp/libwebp';
import type { Dimensions, RgbaImage } from '../../src/image/types';

/** The first frame of an animated WebP as a standalone still, with where it lies on the canvas; null for a still file. */
export function firstFrameAsStill(bytes: Uint8Array): (FirstFrame & { still: Uint8Array }) | null {
  if (!isAnimatedWebp(bytes)) return null;
  const { animation, firstFrameDamage } = readWebpHeader(bytes);
  if (firstFrameDamage) throw firstFrameDamage;
  return animation && { ...animation, still: stillOf(bytes, animation) };
}

/** True for a RIFF/WEBP file whose first chunk is VP8X with the animation flag set. */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  return startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBP') && startsWith(bytes, 12, 'VP8X') && bytes.length > 20 && (bytes[20] & 0x02) !== 0;
}

/**
 * The decoded first frame placed at `at` on a transparent canvas (libwebp's animation decoder starts
 * from a transparent canvas, so blending the first frame onto it leaves the frame's pixels as they
 * are). A frame that covers the whole canvas is returned unchanged. The canvas size must have passed
 * the pixel-limit guard: it is allocated here.
 */
export function placeOnCanvas(frame: RgbaImage, canvas: Dimensions, at: { x: number; y: number }): RgbaImage {
  const { width, height } = frame;
  if (frame.data.length !== width * height * 4) throw damaged(`webp: frame pixels ${frame.data.length} for ${width}x${height}`);
  if (at.x < 0 || at.y < 0 || at.x + width > canvas.width || at.y + height > canvas.height) {
    throw damaged(`webp: frame ${width}x${height} at ${at.x},${at.y} outside the ${canvas.width}x${canvas.height} canvas`);
  }
  if (at.x === 0 && at.y === 0 && width === canvas.width && height === canvas.height) return frame;
  const data = new Uint8Array(canvas.width * canvas.height * 4);
  const row = width * 4;
  for (let y = 0; y < height; y++) {
    data.set(frame.data.subarray(y * row, (y + 1) * row), ((at.y + y) * canvas.width + at.x) * 4);
  }
  return { data, width: canvas.width, height: canvas.height };
}




/**
 * libwebp's own one-call decode of a still file (WebPDecodeRGBA) into one frame: the reference the
 * band decoder is tested against. Holds the file and the frame inside the instance.
 */
export async function decodeWebpWhole(input: Uint8Array): Promise<RgbaImage> {
  const { width, height } = readWebpDimensions(input);
  const wasm: WasmInstance<Libwebp> = await openLibwebp('webp-decoder');
  const lib = wasm.instance;
  const decoder = lib._decoder_create(input.length);
  try {
    if (!decoder) throw outOfMemory('libwebp decoder_create');
    heap(wasm).set(input, lib._decoder_input(decoder));
    const pixels = lib._decoder_decode_whole(decoder);
    if (!pixels) throw damaged('webp: WebPDecodeRGBA failed');
    const data = heap(wasm).slice(pixels, pixels + width * height * 4);
    lib._decoder_free_whole(pixels);
    return { data, width, height };
  } finally {
    if (decoder) lib._decoder_destroy(decoder);
    wasm.release();
  }
}

