/// <reference types="node" />
/**
 * The full-size matrix: every full-size input (12, 24 and 48 MP; baseline, progressive and
 * EXIF-rotated JPEG, PNG, WebP, AVIF; test/support/large-inputs.ts) through every operation and
 * output format, once each, on a `wrangler dev` with the DEFAULT configuration (memory budget and
 * pixel limits as deployed; only DIAGNOSTIC_HEADERS on, for X-Pipeline-Peak-Bytes). Each row says
 * whether the call succeeded or what it answered, what the pipeline held and what the memory guard
 * predicted, and how long the call took.
 */
import { largeInput } from '../test/support/large-inputs.ts';
import { DEMO_PRO_KEY, multipartBody, type ApiClient } from './api.ts';

export interface MatrixCase {
  input: string;
  operation: string;
  endpoint: string;
  fields: Record<string, string>;
}

export interface MatrixResult extends MatrixCase {
  status: number;
  /** 'ok' or the error code. */
  outcome: string;
  message: string | null;
  ms: number;
  width: number | null;
  height: number | null;
  bytes: number | null;
  peakBytes: number | null;
  plannedBytes: number | null;
  /** The memory target for this input size: 64 MiB at 12 MP, 100 MiB at 24 MP and above. */
  limitMiB: number;
}

const OPERATIONS: Record<string, { endpoint: string; fields: Record<string, string> }> = {
  'convert jpg q80': { endpoint: '/api/v1/convert', fields: { format: 'jpg', quality: '80' } },
  'convert jpg q95': { endpoint: '/api/v1/convert', fields: { format: 'jpg', quality: '95' } },
  'convert webp': { endpoint: '/api/v1/convert', fields: { format: 'webp', quality: '80' } },
  'convert png': { endpoint: '/api/v1/convert', fields: { format: 'png' } },
  'convert avif': { endpoint: '/api/v1/convert', fields: { format: 'avif', quality: '80' } },
  'resize 1600 webp': { endpoint: '/api/v1/resize', fields: { width: '1600', format: 'webp', quality: '80' } },
  'resize 1600 avif': { endpoint: '/api/v1/resize', fields: { width: '1600', format: 'avif', quality: '80' } },
  'crop 2000x1500': { endpoint: '/api/v1/crop', fields: { x: '500', y: '400', width: '2000', height: '1500' } },
  // Several steps in one call: the geometry folds into the decode and the encoder's placing of rows, the sharpen streams.
  'crop resize rotate sharpen webp': {
    endpoint: '/api/v1/transform',
    fields: {
      steps: JSON.stringify([
        { op: 'crop', x: 500, y: 400, width: 2000, height: 1500 },
        { op: 'resize', width: 1600 },
        { op: 'rotate', angle: 90 },
        { op: 'sharpen', sigma: 1 },
      ]),
      format: 'webp',
      quality: '80',
    },
  },
  // The filters at full size: the blur's mask on every pixel (below sigma 8), and on its grid.
  'blur 4 jpg': { endpoint: '/api/v1/transform', fields: { steps: JSON.stringify([{ op: 'blur', sigma: 4 }]), format: 'jpg', quality: '80' } },
  'blur 50 jpg': { endpoint: '/api/v1/transform', fields: { steps: JSON.stringify([{ op: 'blur', sigma: 50 }]), format: 'jpg', quality: '80' } },
};

const ALL = Object.keys(OPERATIONS);

/** Input -> the operations run on it. */
const MATRIX: Record<string, string[]> = {
  'jpeg-12mp.jpg': ALL,
  'jpeg-12mp-progressive.jpg': ALL,
  'jpeg-12mp-rotated.jpg': ALL,
  'png-12mp.png': ALL,
  'webp-12mp.webp': ALL,
  'avif-12mp.avif': ALL,
  'jpeg-24mp.jpg': ALL,
  'jpeg-24mp-progressive.jpg': ALL,
  // Portrait camera photos (EXIF Orientation 6 and 8), whose results are turned.
  'jpeg-24mp-rotated.jpg': ALL,
  'png-24mp.png': ALL,
  'webp-24mp.webp': ALL,
  'avif-24mp.avif': ALL,
  // The edge of what the Pro plan accepts (50 MB, 50 MP): a 48 MiB 24 MP PNG, a 4:2:0 single-item AVIF, 48 MP WebP and JPEG.
  'png-24mp-zlib6.png': ALL,
  'avif-24mp-420.avif': ALL,
  'webp-48mp.webp': ALL,
  'jpeg-48mp.jpg': ALL,
  'jpeg-48mp-progressive.jpg': ALL,
  'jpeg-48mp-rotated.jpg': ALL,
  // A 48 MP single AVIF frame (decoded into a window of rows) and a 5K lossless WebP (a ring of pixels).
  'avif-48mp-420.avif': ALL,
  'webp-lossless-15mp.webp': ALL,
};

export function matrixCases(filter: (input: string) => boolean = () => true): MatrixCase[] {
  return Object.entries(MATRIX)
    .filter(([input]) => filter(input))
    .flatMap(([input, operations]) => operations.map((operation) => ({ input, operation, ...OPERATIONS[operation] })));
}

const MIME: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

export async function runMatrixCase(client: ApiClient, c: MatrixCase): Promise<MatrixResult> {
  const bytes = await largeInput(c.input);
  const extension = c.input.split('.').pop()!;
  const body = multipartBody(c.fields, { name: c.input, type: MIME[extension], bytes });
  const res = await client.call<{ success: boolean; data?: { width: number; height: number; size: number }; error?: { code: string; message: string } }>(
    DEMO_PRO_KEY,
    'POST',
    c.endpoint,
    body,
  );
  const megapixels = Number(/-(\d+)mp/.exec(c.input)?.[1] ?? 12);
  return {
    ...c,
    status: res.status,
    outcome: res.json.success ? 'ok' : (res.json.error?.code ?? String(res.status)),
    message: res.json.error?.message ?? null,
    ms: Math.round(res.ms),
    width: res.json.data?.width ?? null,
    height: res.json.data?.height ?? null,
    bytes: res.json.data?.size ?? null,
    peakBytes: res.pipelinePeakBytes,
    plannedBytes: res.pipelinePlannedBytes,
    limitMiB: megapixels <= 12 ? 64 : 100,
  };
}
