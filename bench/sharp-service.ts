/// <reference types="node" />
/**
 * What a user would otherwise host: a plain Node service that takes the same multipart upload as
 * the API (`file`, `format`, `quality`, `width`), runs sharp with one thread, writes the file and
 * answers the same JSON, with the file served back at its download_url. `npm run bench -- --load`
 * runs the same mix against it and the API (bench/load-mix.ts) and compares CPU per request.
 *
 *   node bench/sharp-service.ts <port> <directory>
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import sharp from 'sharp';

sharp.concurrency(1);
sharp.cache(false);

const [portArgument, directory] = process.argv.slice(2);
const EXTENSIONS: Record<string, string> = { jpg: 'jpg', jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif' };
const TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function answer(response: ServerResponse, status: number, json: unknown): void {
  const text = JSON.stringify(json);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

async function convert(request: IncomingMessage, response: ServerResponse, operation: string): Promise<void> {
  const form = await new Request(`http://service${request.url}`, {
    method: 'POST',
    headers: { 'Content-Type': request.headers['content-type'] ?? '' },
    body: await body(request),
  }).formData();
  const file = form.get('file');
  const format = EXTENSIONS[String(form.get('format') ?? '')];
  if (!(file instanceof File) || !format) return answer(response, 422, { success: false, error: { code: 'INVALID_PARAMETERS', message: 'file and format' } });
  const quality = Number(form.get('quality') ?? 80);
  let pipeline = sharp(Buffer.from(await file.arrayBuffer())).rotate();
  if (operation === 'resize') pipeline = pipeline.resize(Number(form.get('width')));
  const { data, info } = await pipeline.toFormat(format === 'jpg' ? 'jpeg' : (format as 'png' | 'webp' | 'avif'), { quality }).toBuffer({ resolveWithObject: true });
  const name = `${randomUUID()}.${format}`;
  await writeFile(path.join(directory, name), data);
  answer(response, 200, {
    success: true,
    data: { uuid: name, format, size: data.byteLength, width: info.width, height: info.height, download_url: `http://127.0.0.1:${portArgument}/files/${name}` },
  });
}

createServer((request, response) => {
  const route = /^\/api\/v1\/(convert|resize)$/.exec(request.url ?? '');
  const file = /^\/files\/([0-9a-f-]{36}\.(jpg|png|webp|avif))$/.exec(request.url ?? '');
  const work = route && request.method === 'POST'
    ? convert(request, response, route[1])
    : file
      ? readFile(path.join(directory, file[1])).then((bytes) => {
          response.writeHead(200, { 'Content-Type': TYPES[file[2]], 'Content-Length': bytes.byteLength });
          response.end(bytes);
        })
      : Promise.resolve(answer(response, 404, { success: false }));
  work.catch((error: unknown) => answer(response, 500, { success: false, error: { code: 'CONVERSION_FAILED', message: String(error) } }));
}).listen(Number(portArgument), '127.0.0.1', () => console.log(`sharp service on ${portArgument}`));
