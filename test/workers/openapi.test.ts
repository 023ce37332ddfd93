import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors';
import { ERROR_STATUS } from '../../src/http/error-handler';
import { api, createTestUser, download, json, upload } from './helpers';
import { encodeImage, gradient } from './images';

async function openapi() {
  const response = await api('/api/v1/openapi.json');
  expect(response.status).toBe(200);
  return (await response.json()) as any;
}

const resolve = (doc: any, node: any) => (node?.$ref ? node.$ref.split('/').slice(1).reduce((at: any, key: string) => at[key], doc) : node);
const operations = (doc: any) =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) => Object.entries(item).map(([method, operation]: [string, any]) => ({ path, method, operation })));

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document generated from the validation schemas', async () => {
    const doc = await openapi();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/api/v1/convert', '/api/v1/crop', '/api/v1/me', '/api/v1/remove-metadata', '/api/v1/resize', '/api/v1/transform', '/download/{uuid}/{format}/{filename}'].sort(),
    );
    const convert = doc.paths['/api/v1/convert'].post;
    const schema = resolve(doc, convert.requestBody.content['multipart/form-data'].schema);
    expect(schema.required).toEqual(expect.arrayContaining(['file', 'format']));
    expect(schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(schema.properties.format.enum).toEqual(['webp', 'avif', 'jpg', 'png', 'best']);
    expect(convert.security).toEqual([{ ApiKey: [] }]);
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.servers).toEqual([{ url: 'http://api.test', description: expect.any(String) }]);
  });

  it('names and tags every operation', async () => {
    const doc = await openapi();
    const ids = operations(doc).map(({ operation }) => operation.operationId);
    expect(ids.sort()).toEqual(['convertImage', 'cropImage', 'describeResult', 'downloadResult', 'getAccount', 'removeMetadata', 'resizeImage', 'transformImage']);
    const tags = doc.tags.map((tag: any) => tag.name);
    for (const { operation } of operations(doc)) expect(tags).toEqual(expect.arrayContaining(operation.tags));
  });

  it('documents the defaults, ranges and an example of every field, so that "Try it out" starts from a working call', async () => {
    const doc = await openapi();
    const form = (path: string) => resolve(doc, doc.paths[path].post.requestBody.content['multipart/form-data'].schema).properties;
    // A number or the word auto: the typed client gets number | "auto".
    expect(form('/api/v1/convert').quality).toMatchObject({ anyOf: [{ type: 'integer', minimum: 1, maximum: 100 }, { type: 'string', enum: ['auto'] }], default: 80, example: 80 });
    for (const path of ['/api/v1/convert', '/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/transform']) {
      // An empty example (not given): "Try it out" would otherwise send the minimum beside quality=80, which it may not go with.
      expect(form(path).quality_target, path).toMatchObject({ anyOf: [{ type: 'number', minimum: 30, maximum: 90 }, { type: 'string', enum: [''] }], example: '' });
    }
    expect(doc.components.schemas.Result.properties).toMatchObject({ quality: { type: ['integer', 'null'] }, score: { $ref: '#/components/schemas/Score' } });
    expect(doc.components.schemas.Score.properties).toMatchObject({ metric: { enum: ['ssimulacra2'] }, measured_on: { enum: ['picture', 'sample'] } });
    expect(form('/api/v1/convert').format.example).toBe('webp');
    expect(form('/api/v1/resize')).toMatchObject({
      width: { minimum: 1, maximum: 12000, example: 800 },
      height: { minimum: 1, maximum: 12000, example: 600 },
      keep_aspect_ratio: { type: 'boolean', default: true },
    });
    expect(form('/api/v1/crop')).toMatchObject({ x: { example: 0 }, y: { example: 0 }, width: { example: 100 }, height: { example: 100 } });
    // Swagger UI fills in an enum's first value: for these, the empty "keep the input's format".
    for (const path of ['/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/transform']) expect(form(path).format, path).toMatchObject({ enum: ['', 'webp', 'avif', 'jpg', 'png', 'best'], default: '' });
  });

  it("describes transform's steps with one schema per op, and an example that works", async () => {
    const doc = await openapi();
    const form = resolve(doc, doc.paths['/api/v1/transform'].post.requestBody.content['multipart/form-data'].schema);
    expect(form.required).toEqual(['file', 'steps']);
    // A multipart field is text: a JSON array, whose schema is the Steps component (no contentMediaType:
    // Swagger UI would offer a file upload for it).
    expect(form.properties.steps).toMatchObject({ type: 'string', contentSchema: { $ref: '#/components/schemas/Steps' } });
    expect(form.properties.steps).not.toHaveProperty('contentMediaType');
    for (const name of ['Steps', 'CropStep', 'ResizeStep', 'RotateStep', 'FlipStep', 'BlurStep', 'SharpenStep', 'GrayscaleStep']) expect(form.properties.steps.description).toContain(`\`${name}\``);
    expect(JSON.parse(form.properties.steps.example)).toEqual(doc.components.schemas.Steps.example);
    expect(doc.components.schemas.Steps).toMatchObject({ type: 'array', maxItems: 10, items: { $ref: '#/components/schemas/Step' } });
    const step = doc.components.schemas.Step;
    const ops = { crop: 'CropStep', resize: 'ResizeStep', rotate: 'RotateStep', flip: 'FlipStep', blur: 'BlurStep', sharpen: 'SharpenStep', grayscale: 'GrayscaleStep' };
    expect(step.discriminator).toEqual({ propertyName: 'op', mapping: Object.fromEntries(Object.entries(ops).map(([op, name]) => [op, `#/components/schemas/${name}`])) });
    expect(step.oneOf.map((ref: any) => ref.$ref)).toEqual(Object.values(ops).map((name) => `#/components/schemas/${name}`));
    for (const [op, name] of Object.entries(ops)) {
      const schema = doc.components.schemas[name];
      expect(schema.properties.op.enum, name).toEqual([op]);
      expect(schema.additionalProperties, name).toBe(false);
    }
    expect(doc.components.schemas.BlurStep.properties.sigma).toMatchObject({ minimum: 0.3, maximum: 1000 });
    expect(doc.components.schemas.SharpenStep.properties.sigma).toMatchObject({ minimum: 0.5, maximum: 10 });
    expect(doc.components.schemas.RotateStep.properties.angle.enum).toEqual([90, 180, 270]);

    // The documented example, as "Try it out" sends it, runs.
    const { key } = await createTestUser({ plan: 'pro' });
    const response = await upload('/api/v1/transform', key, await encodeImage('png', gradient(100, 80)), { steps: form.properties.steps.example });
    expect(response.status).toBe(200);
    expect((await json(response)).data).toMatchObject({ width: 30, height: 40 });
  });

  it('gives one example per error code, under the status that code is answered with', async () => {
    const doc = await openapi();
    const seen = new Map<string, number>();
    for (const { operation } of operations(doc)) {
      for (const [status, response] of Object.entries(operation.responses) as [string, any][]) {
        const examples = response.content?.['application/json']?.examples;
        if (!examples) continue;
        const schema = resolve(doc, response.content['application/json'].schema);
        for (const [name, example] of Object.entries(examples) as [string, any][]) {
          expect(example.value.error.code).toBe(name);
          expect(ERROR_STATUS[name as keyof typeof ERROR_STATUS], name).toBe(Number(status));
          expect(schema.properties.error.properties.code.enum).toContain(name);
          seen.set(name, Number(status));
        }
      }
    }
    // FORBIDDEN belongs to the web pages' forms, not to the API.
    expect([...seen.keys()].sort()).toEqual(ERROR_CODES.filter((code) => code !== 'FORBIDDEN').sort());
  });

  it('declares the response headers: request id, quota, Retry-After, validators, ranges, disposition', async () => {
    const doc = await openapi();
    const headersOf = (path: string, method: string, status: number) => Object.keys(doc.paths[path][method].responses[status].headers ?? {});
    for (const { operation } of operations(doc)) {
      for (const response of Object.values(operation.responses) as any[]) expect(Object.keys(response.headers ?? {})).toContain('X-Request-Id');
    }
    expect(headersOf('/api/v1/convert', 'post', 200)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Idempotent-Replayed']));
    expect(headersOf('/api/v1/convert', 'post', 429)).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Remaining']));
    expect(headersOf('/api/v1/me', 'get', 401)).toContain('WWW-Authenticate');
    const file = '/download/{uuid}/{format}/{filename}';
    expect(headersOf(file, 'get', 200)).toEqual(expect.arrayContaining(['ETag', 'Content-Disposition', 'Last-Modified']));
    expect(headersOf(file, 'get', 206)).toContain('Content-Range');
    expect(headersOf(file, 'get', 416)).toContain('Content-Range');
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
  });

  it('describes the download link: path parameters, no security, image files, and 404/405/416 envelopes', async () => {
    const doc = await openapi();
    const get = doc.paths['/download/{uuid}/{format}/{filename}'].get;
    expect(get.security).toEqual([]);
    expect(get.parameters.filter((parameter: any) => parameter.in === 'path').map((parameter: any) => parameter.name)).toEqual(['uuid', 'format', 'filename']);
    expect(get.parameters.filter((parameter: any) => parameter.in === 'header').map((parameter: any) => parameter.name)).toEqual([
      'Range',
      'If-Range',
      'If-None-Match',
      'If-Modified-Since',
    ]);
    expect(Object.keys(get.responses[200].content).sort()).toEqual(['image/avif', 'image/jpeg', 'image/png', 'image/webp']);
    for (const status of [404, 405, 416]) expect(resolve(doc, get.responses[status].content['application/json'].schema).properties.success).toBeDefined();
  });
});

describe('CORS', () => {
  it('is not offered by the API, whose keys belong on servers', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const preflight = await api('/api/v1/convert', {
      method: 'OPTIONS',
      headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(preflight.headers.has('Access-Control-Allow-Origin')).toBe(false);
    const call = await api('/api/v1/me', { key: user.key, headers: { Origin: 'https://elsewhere.example' } });
    expect(call.status).toBe(200);
    expect(call.headers.has('Access-Control-Allow-Origin')).toBe(false);
  });

  it('lets any page that holds a download link read the file', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data } = await json(await upload('/api/v1/convert', user.key, await encodeImage('png', gradient(8, 8)), { format: 'webp' }));
    const preflight = await download(data.download_url, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'range' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(preflight.headers.get('Access-Control-Allow-Headers')?.toLowerCase()).toContain('range');
    const file = await download(data.download_url, { headers: { Origin: 'https://app.example' } });
    expect(file.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(file.headers.get('Access-Control-Expose-Headers')).toContain('Content-Disposition');
  });
});
