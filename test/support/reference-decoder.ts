/**
 * The independent reference decoder for tests: sharp (libvips with libjpeg-turbo/mozjpeg, libpng,
 * libwebp, libheif + aom, colour-managed by lcms). Runs in Node; workerd tests reach it through the
 * test-only `REFERENCE` service binding (see test/vitest.config.ts).
 *
 * What it returns is what a colour-managed viewer shows: EXIF orientation applied, any embedded ICC
 * profile converted to sRGB (CMYK without a profile through libvips' default CMYK profile), 8 bits
 * per channel, always RGBA.
 */
import sharp from 'sharp';

export interface ReferencePixels {
  data: Uint8Array;
  width: number;
  height: number;
}

export async function referenceDecode(bytes: Uint8Array): Promise<ReferencePixels> {
  const { depth, channels = 0 } = await sharp(bytes, { failOn: 'none' }).metadata();
  let pipeline = sharp(bytes, { failOn: 'none', animated: false, limitInputPixels: false }).rotate();
  // Without this, sharp 0.35 mis-converts 16-bit colour input that embeds a profile: sRGB red stored
  // in a ProPhoto 16-bit PNG comes back as (234, 50, 33) instead of (255, 0, 0). (With it, 8-bit
  // grey input would lose its grey profile, hence only here.)
  if (depth === 'ushort' && channels >= 3) pipeline = pipeline.pipelineColourspace('srgb');
  const { data, info } = await pipeline.toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`reference decode gave ${info.channels} channels`);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

/** Serves `referenceDecode` over HTTP: POST the file, get raw RGBA with its size in headers. */
export async function serveReferenceDecode(request: Request): Promise<Response> {
  try {
    const pixels = await referenceDecode(new Uint8Array(await request.arrayBuffer()));
    return new Response(pixels.data, { headers: { 'x-width': String(pixels.width), 'x-height': String(pixels.height) } });
  } catch (error) {
    return new Response(String(error), { status: 422 });
  }
}
