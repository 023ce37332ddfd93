/**
 * The Worker bench/png-codec.ts runs in workerd: the PNG codec of src/image/formats/png behind a few
 * routes, so its time and memory are workerd's, measured from outside.
 */
import { openPng } from '../src/image/formats/png/decode.ts';
import { readPngHeader } from '../src/image/formats/png/header.ts';
import { DEFAULT_PNG_ENCODE, encodePng, type FilterStrategy } from '../src/image/formats/png/encode.ts';
import { frameSource } from '../test/support/row-sources.ts';

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const query = (name: string) => url.searchParams.get(name) ?? '';
    const body = new Uint8Array(await request.arrayBuffer());
    switch (url.pathname) {
      // Transfer only: what the timed routes cost besides the codec.
      case '/null':
        return new Response(new Uint8Array(Number(query('reply') || 0)));
      case '/decode': {
        const source = await openPng(body, readPngHeader(body), { shrink: 1, region: null });
        let rows = 0;
        let wasmBytes = 0;
        for (let band = await source.read(); band; band = await source.read()) {
          rows += band.rows;
          wasmBytes = Math.max(wasmBytes, source.wasmBytes());
        }
        return Response.json({ rows, wasmBytes });
      }
      case '/encode': {
        const [width, height] = [Number(query('width')), Number(query('height'))];
        const settings = { ...DEFAULT_PNG_ENCODE, filter: (query('filter') || DEFAULT_PNG_ENCODE.filter) as FilterStrategy, level: Number(query('level') || DEFAULT_PNG_ENCODE.level) };
        const png = await encodePng(frameSource({ data: body, width, height }, { alpha: query('alpha') === '1', grey: query('grey') === '1' }), settings);
        return new Response(png);
      }
    }
    return new Response('no such route', { status: 404 });
  },
};
