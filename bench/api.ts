/// <reference types="node" />
/**
 * The benchmark's HTTP side: multipart bodies built once in memory, calls paced per key so
 * the plan's per-second rate limit is never what is measured, and Pro users made with the
 * operator command (`npm run admin -- create-user`) for the load tests.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BIN_DIR, PROJECT_ROOT, wranglerEnv } from '../src/cli/d1.ts';

export const DEMO_PRO_KEY = 'imgk_demopro0000000000000000000000000';

export interface MultipartBody {
  body: Buffer;
  contentType: string;
}

/** multipart/form-data with text fields and one `file` part, as a single buffer. */
export function multipartBody(fields: Record<string, string>, file: { name: string; type: string; bytes: Uint8Array }): MultipartBody {
  const boundary = `----bench${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`),
    Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface ApiResult {
  uuid: string;
  format: string;
  filename: string;
  size: number;
  width: number;
  height: number;
  download_url: string;
}

export interface TimedResponse<T> {
  status: number;
  ms: number;
  json: T;
  /** X-Pipeline-Peak-Bytes: what the Worker's pipeline held at its fullest (DIAGNOSTIC_HEADERS=true). */
  pipelinePeakBytes: number | null;
  /** X-Pipeline-Planned-Bytes: what the memory guard predicted for the request before decoding. */
  pipelinePlannedBytes: number | null;
  /** Server-Timing (DIAGNOSTIC_HEADERS=true): ms per request step and pipeline stage. */
  steps: Record<string, number>;
}

/** `Server-Timing: auth;dur=3.1, pipeline.decode;dur=120` as { auth: 3.1, 'pipeline.decode': 120 }. */
export function serverTiming(header: string | null): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const entry of (header ?? '').split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const duration = params.map((p) => /^\s*dur=([\d.]+)/.exec(p)?.[1]).find(Boolean);
    if (name && duration) steps[name] = Number(duration);
  }
  return steps;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Pro allows 10 requests per second per user in a sliding one-second window; starting calls
 * on one key at least 110 ms apart keeps every window at 9 or fewer. The wait is not timed.
 */
const KEY_SPACING_MS = 110;

export class ApiClient {
  readonly baseUrl: string;
  private lastStart = new Map<string, number>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  private async pace(key: string): Promise<void> {
    const last = this.lastStart.get(key);
    if (last !== undefined) {
      const wait = last + KEY_SPACING_MS - performance.now();
      if (wait > 0) await sleep(wait);
    }
    this.lastStart.set(key, performance.now());
  }

  /**
   * One timed call: from sending the request to having parsed the JSON answer. A 429 (which
   * pacing should prevent) is waited out and retried, untimed, up to three times.
   */
  async call<T = unknown>(key: string, method: 'GET' | 'POST', pathname: string, body?: MultipartBody): Promise<TimedResponse<T>> {
    for (let attempt = 0; ; attempt++) {
      await this.pace(key);
      const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
      if (body) headers['Content-Type'] = body.contentType;
      const start = performance.now();
      const res = await fetch(this.baseUrl + pathname, { method, headers, body: body?.body });
      const text = await res.text();
      const ms = performance.now() - start;
      let json: T;
      try {
        json = JSON.parse(text) as T;
      } catch {
        throw new Error(`${method} ${pathname} answered ${res.status} with a body that is not JSON: ${text.slice(0, 300)}`);
      }
      if (res.status === 429 && attempt < 3) {
        await sleep(1000 * (Number(res.headers.get('retry-after')) || 1));
        continue;
      }
      return {
        status: res.status,
        ms,
        json,
        pipelinePeakBytes: Number(res.headers.get('x-pipeline-peak-bytes')) || null,
        pipelinePlannedBytes: Number(res.headers.get('x-pipeline-planned-bytes')) || null,
        steps: serverTiming(res.headers.get('server-timing')),
      };
    }
  }

  /** A processing call that must succeed; returns the Result object and the time. */
  async process(
    key: string,
    pathname: string,
    body: MultipartBody,
  ): Promise<{ ms: number; result: ApiResult; pipelinePeakBytes: number | null; pipelinePlannedBytes: number | null; steps: Record<string, number> }> {
    const res = await this.call<{ success: boolean; data?: ApiResult; error?: { code: string; message: string } }>(key, 'POST', pathname, body);
    if (res.status !== 200 || !res.json.success || !res.json.data) {
      throw new Error(`POST ${pathname} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 500)}`);
    }
    return { ms: res.ms, result: res.json.data, pipelinePeakBytes: res.pipelinePeakBytes, pipelinePlannedBytes: res.pipelinePlannedBytes, steps: res.steps };
  }

  /** Downloads a result file (untimed). */
  async download(url: string): Promise<Uint8Array> {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }
}

/**
 * Creates a Pro user with the operator command against the dev server's local database and
 * returns its key (printed alone on the last line of stdout). Takes a few seconds (one
 * wrangler d1 call).
 */
export function createProUser(email: string, persistTo: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      path.join(BIN_DIR, 'node'),
      [path.join(PROJECT_ROOT, 'src', 'cli', 'admin.ts'), 'create-user', email, '--plan', 'pro', '--persist-to', persistTo],
      { cwd: PROJECT_ROOT, env: wranglerEnv(), encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) => {
        const key = stdout.trim().split('\n').at(-1)?.trim() ?? '';
        if (error || !/^imgk_[A-Za-z0-9]{32}$/.test(key)) {
          reject(new Error(`admin create-user ${email} failed: ${error?.message ?? ''}\n${stdout}\n${stderr}`));
        } else resolve(key);
      },
    );
  });
}
