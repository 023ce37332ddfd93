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

export interface RawReferencePixels extends ReferencePixels {
  /** 'rgba' (grey expanded to R = G = B), or 'cmyk': ink amounts, Adobe's inversion undone. */
  model: 'rgba' | 'cmyk';
}

/**
 * libjpeg-turbo's plain decode of a JPEG as sharp does it, for comparing decoders bit for bit: no
 * colour management (an embedded profile is kept, not applied), no orientation, 4 bytes a pixel.
 * 4-component files stay CMYK: `pipelineColourspace('cmyk')` keeps libvips from converting
 * through a profile.
 */
export async function referenceRawDecode(bytes: Uint8Array): Promise<RawReferencePixels> {
  const { space } = await sharp(bytes).metadata();
  const cmyk = space === 'cmyk';
  const pipeline = cmyk
    ? sharp(bytes, { limitInputPixels: false }).pipelineColourspace('cmyk').toColourspace('cmyk')
    : sharp(bytes, { limitInputPixels: false }).keepIccProfile().ensureAlpha();
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`raw reference decode gave ${info.channels} channels`);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height, model: cmyk ? 'cmyk' : 'rgba' };
}

/** sharp's JPEG of RGBA pixels (alpha dropped): its default `jpeg({ quality })`, or progressive. */
export async function referenceJpegEncode(rgba: Uint8Array, width: number, height: number, quality: number, progressive: boolean): Promise<Uint8Array> {
  const jpeg = await sharp(rgba, { raw: { width, height, channels: 4 }, limitInputPixels: false }).removeAlpha().jpeg({ quality, progressive }).toBuffer();
  return new Uint8Array(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength);
}

/**
 * Serves `referenceDecode` over HTTP: POST the file, get raw RGBA with its size in headers;
 * `?raw` serves `referenceRawDecode` instead (its model in `x-model`), and
 * `?jpeg&width=&height=&quality=[&progressive]` takes RGBA and serves `referenceJpegEncode`.
 */
export async function serveReferenceDecode(request: Request): Promise<Response> {
  try {
    const bytes = new Uint8Array(await request.arrayBuffer());
    const query = new URL(request.url).searchParams;
    if (query.has('jpeg')) {
      const number = (name: string) => Number(query.get(name));
      return new Response(await referenceJpegEncode(bytes, number('width'), number('height'), number('quality'), query.has('progressive')));
    }
    if (query.has('raw')) {
      const pixels = await referenceRawDecode(bytes);
      return new Response(pixels.data, { headers: { 'x-width': String(pixels.width), 'x-height': String(pixels.height), 'x-model': pixels.model } });
    }
    const pixels = await referenceDecode(bytes);
    return new Response(pixels.data, { headers: { 'x-width': String(pixels.width), 'x-height': String(pixels.height) } });
  } catch (error) {
    return new Response(String(error), { status: 422 });
  }
}
