import decodeJpeg, { init as initJpegDecode } from '@jsquash/jpeg/decode';
import jpegDecWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import { DurableObject } from 'cloudflare:workers';

let ready: Promise<void> | undefined;
export default {
  async fetch(req: Request): Promise<Response> {
    ready ??= initJpegDecode(jpegDecWasm);
    await ready;
    const img = await decodeJpeg(await req.arrayBuffer());
    return Response.json({ w: img.width, h: img.height });
  },
};
export class RateLimiter extends DurableObject {}
