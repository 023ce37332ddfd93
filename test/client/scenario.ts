/**
 * A client of the service as an API user would write it: openapi-fetch over the types that
 * openapi-typescript generated from the OpenAPI document (api-types.ts), with no casts.
 * test/node/openapi-client.test.ts compiles this file on its own (tsconfig.json here) and runs it
 * against `npm run dev`.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.ts';

type Result = components['schemas']['Result'];
type Step = components['schemas']['Step'];
type FormValue = Blob | string | number | boolean | undefined;

/** The processing calls take multipart/form-data: the file and the fields, leaving out what is not given. */
export function formData(fields: Record<string, FormValue>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (value instanceof Blob) form.append(name, value);
    else if (value !== undefined) form.append(name, String(value));
  }
  return form;
}

export function imageApi(baseUrl: string, apiKey?: string) {
  return createClient<paths>({ baseUrl, headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
}

type ImageApi = ReturnType<typeof imageApi>;

/** A failed call's code, message and request id, as the failure envelope gives them. */
function failure(error: { error: { code: string; message: string; request_id: string } }, status: number) {
  return { status, code: error.error.code, message: error.error.message, requestId: error.error.request_id };
}

export async function account(api: ImageApi) {
  const { data, error, response } = await api.GET('/api/v1/me');
  if (error) return { ok: false as const, ...failure(error, response.status) };
  return { ok: true as const, plan: data.data.user.plan, remaining: data.data.quota.daily_remaining, maxBytes: data.data.quota.max_file_size_bytes };
}

export async function convert(api: ImageApi, file: File, format: Result['format'], idempotencyKey?: string) {
  const { data, error, response } = await api.POST('/api/v1/convert', {
    params: { header: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} },
    body: { file, format, quality: 75 },
    bodySerializer: formData,
  });
  if (error) return { ok: false as const, ...failure(error, response.status) };
  return { ok: true as const, result: data.data, replayed: response.headers.get('Idempotent-Replayed') === 'true', requestId: response.headers.get('X-Request-Id') };
}

/**
 * The smallest file that still looks good: WebP, AVIF or JPEG, each at the lowest quality whose
 * SSIMULACRA 2 score reaches `target` (or the service's default); the result says which format,
 * quality and score.
 */
export async function smallest(api: ImageApi, file: File, target?: number) {
  const { data, error, response } = await api.POST('/api/v1/convert', { body: { file, format: 'best', quality: 'auto', quality_target: target }, bodySerializer: formData });
  if (error) return { ok: false as const, ...failure(error, response.status) };
  const { format, quality, score } = data.data;
  return { ok: true as const, result: data.data, format, quality, score: score ? `${score.metric} ${score.value} for ${score.target} (${score.measured_on})` : null };
}

export async function crop(api: ImageApi, file: File, region: { x: number; y: number; width: number; height: number }) {
  const { data, error, response } = await api.POST('/api/v1/crop', { body: { file, ...region }, bodySerializer: formData });
  return error ? { ok: false as const, ...failure(error, response.status) } : { ok: true as const, result: data.data };
}

export async function resize(api: ImageApi, file: File, width: number) {
  const { data, error, response } = await api.POST('/api/v1/resize', { body: { file, width, keep_aspect_ratio: true, format: 'png' }, bodySerializer: formData });
  return error ? { ok: false as const, ...failure(error, response.status) } : { ok: true as const, result: data.data };
}

/** A square thumbnail: the box filled, the overflow cut where libvips' attention finds the subject, padding colour white. */
export async function thumbnail(api: ImageApi, file: File, side: number) {
  const { data, error, response } = await api.POST('/api/v1/resize', {
    body: { file, width: side, height: side, fit: 'cover', position: 'attention', background: '#ffffff', format: 'webp' },
    bodySerializer: formData,
  });
  return error ? { ok: false as const, ...failure(error, response.status) } : { ok: true as const, result: data.data };
}

/**
 * Several steps in one call: the document types each step (one schema per op); the form carries
 * them as JSON text.
 */
export async function transform(api: ImageApi, file: File, steps: Step[], format?: Result['format']) {
  const { data, error, response } = await api.POST('/api/v1/transform', { body: { file, steps: JSON.stringify(steps), format }, bodySerializer: formData });
  return error ? { ok: false as const, ...failure(error, response.status) } : { ok: true as const, result: data.data };
}

export async function removeMetadata(api: ImageApi, file: File) {
  const { data, error, response } = await api.POST('/api/v1/remove-metadata', { body: { file }, bodySerializer: formData });
  return error ? { ok: false as const, ...failure(error, response.status) } : { ok: true as const, result: data.data };
}

/** The result's file through its link (no API key), whole or the first `firstBytes` bytes. */
export async function download(api: ImageApi, result: Result, firstBytes?: number) {
  const { data, error, response } = await api.GET('/download/{uuid}/{format}/{filename}', {
    params: {
      path: { uuid: result.uuid, format: result.format, filename: result.filename },
      header: firstBytes ? { Range: `bytes=0-${firstBytes - 1}` } : {},
    },
    parseAs: 'arrayBuffer',
  });
  if (error) return { ok: false as const, ...failure(error, response.status) };
  return { ok: true as const, status: response.status, bytes: new Uint8Array(data), contentType: response.headers.get('Content-Type') };
}
