/**
 * The Worker bench/png-codec.ts runs in workerd: the PNG codec of src/image/formats/png behind a few
 * routes, so its time and memory are workerd's, measured from outside.
 */
import { openPng } from '../src/image/formats/png/decode.ts';
import { readPngHeader } from '../src/image/formats/png/header.ts';
import { DEFAULT_PNG_ENCODE, encodePng, type FilterStrategy } from '../src/image/formats/png/encode.ts';
import { frameSource } from '../test/support/row-sources.ts';


const held: unknown[] = [];

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
        let heldBytes = 0;
        for (let band = await source.read(); band; band = await source.read()) {
          rows += band.rows;
          heldBytes = Math.max(heldBytes, source.heldBytes());
        }
        return Response.json({ rows, heldBytes });
      }
      case '/encode': {
        const [width, height] = [Number(query('width')), Number(query('height'))];
        const settings = { ...DEFAULT_PNG_ENCODE, filter: (query('filter') || DEFAULT_PNG_ENCODE.filter) as FilterStrategy };
        const png = await encodePng(frameSource({ data: body, width, height }, { alpha: query('alpha') === '1', grey: query('grey') === '1' }), settings);
        return new Response(png);
      }
      // Opens `count` zlib streams and leaves them holding what one piece made them hold, so the
      // RSS they add can be read per stream.
      case '/streams': {
        const count = Number(query('count'));
        const piece = body;
        for (let i = 0; i < count; i++) {
          if (query('kind') === 'inflate') {
            const stream = new DecompressionStream('deflate');
            const writer = stream.writable.getWriter();
            const reader = stream.readable.getReader({ mode: 'byob' });
            const read = reader.read(new Uint8Array(64 * 1024));
            await writer.write(piece);
            await read;
            held.push(writer, reader);
          } else {
            const stream = new CompressionStream('deflate');
            const writer = stream.writable.getWriter();
            const reader = stream.readable.getReader({ mode: 'byob' });
            const read = reader.read(new Uint8Array(64 * 1024));
            await writer.write(piece);
            held.push(writer, reader, read);
          }
        }
        return Response.json({ streams: held.length / 2 });
      }
      case '/release':
        held.length = 0;
        return Response.json({});
    }
    return new Response('no such route', { status: 404 });
  },
};
