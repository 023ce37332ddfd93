/// <reference types="node" />
/**
 * Load tests with autocannon: a fixed number of connections for a fixed time against the
 * local dev server only, requests spread round robin over several Pro users' keys so that
 * the per-user limit of 10 requests per second is not what is measured (429s, if any, are
 * counted and reported apart).
 */
import autocannon from 'autocannon';
import type { MultipartBody } from './api.ts';

export interface LoadOptions {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  body?: MultipartBody;
  keys: string[];
  connections: number;
  seconds: number;
}

export interface LoadResult {
  connections: number;
  seconds: number;
  keys: number;
  /** Completed responses of any status. */
  responses: number;
  ok: number;
  rateLimited: number;
  otherStatus: Record<string, number>;
  errors: number;
  timeouts: number;
  rpsOk: number;
  rpsAll: number;
  /** Latency over all responses (ms; autocannon's HDR histogram, 1 ms resolution). */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let next = 0;
  const baseHeaders: Record<string, string> = options.body ? { 'content-type': options.body.contentType } : {};
  const request: AutocannonRequest = {
    method: options.method,
    path: options.path,
    headers: { ...baseHeaders, authorization: `Bearer ${options.keys[0]}` },
    body: options.body?.body,
    // Called for every request: the next key, round robin over all connections.
    setupRequest: (req) => ({
      ...req,
      headers: { ...baseHeaders, authorization: `Bearer ${options.keys[next++ % options.keys.length]}` },
    }),
  };
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    timeout: 30,
    requests: [request],
  });
  const status: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}) as [string, { count: number }][]) status[code] = count;
  const ok = status['200'] ?? 0;
  const rateLimited = status['429'] ?? 0;
  const otherStatus = Object.fromEntries(Object.entries(status).filter(([code]) => code !== '200' && code !== '429'));
  const responses = Object.values(status).reduce((a, b) => a + b, 0);
  const duration = result.duration || options.seconds;
  return {
    connections: options.connections,
    seconds: duration,
    keys: options.keys.length,
    responses,
    ok,
    rateLimited,
    otherStatus,
    errors: result.errors,
    timeouts: result.timeouts,
    rpsOk: ok / duration,
    rpsAll: responses / duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
  };
}
