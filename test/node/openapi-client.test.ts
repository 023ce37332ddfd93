/// <reference types="node" />
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/api-types';
import { BIN_DIR, PROJECT_ROOT } from '../../src/cli/d1';
import * as client from '../client/scenario';
import { DEMO_ACCOUNTS, startDevServer, type DevServer } from './dev-server';

const run = promisify(execFile);
const CLIENT_DIR = path.join(PROJECT_ROOT, 'test', 'client');
const [FREE, PRO] = DEMO_ACCOUNTS;
const photo = () => new File([readFileSync(path.join(PROJECT_ROOT, '../shared/corpus/jpeg/camera/Canon_40D.jpg'))], 'Canon_40D.jpg');

describe('the OpenAPI document of npm run dev, as a client developer uses it', () => {
  let server: DevServer;
  let document: any;
  let scratch: string;
  beforeAll(async () => {
    server = await startDevServer();
    document = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
    scratch = mkdtempSync(path.join(tmpdir(), 'openapi-client-'));
  });
  afterAll(async () => {
    await server?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("passes Redocly's recommended lint with no error and no warning (exceptions justified in redocly.yaml)", async () => {
    const file = path.join(scratch, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    // Telemetry and update checks off: the lint must run offline.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const { stdout } = await run(path.join(BIN_DIR, 'redocly'), ['lint', '--config', path.join(PROJECT_ROOT, 'redocly.yaml'), '--format', 'json', file], {
      cwd: scratch,
      env,
      timeout: 60_000,
    });
    const report = JSON.parse(stdout);
    expect(report.problems.map((problem: any) => `${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('gives the client types committed in test/client/api-types.ts (npm run api-types regenerates them)', async () => {
    expect(await generateApiTypes(document)).toBe(readFileSync(API_TYPES_FILE, 'utf8'));
  });

  it('compiles a client made of those types and openapi-fetch, without a single cast', async () => {
    const code = readFileSync(path.join(CLIENT_DIR, 'scenario.ts'), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    // `as const` only; no `as T`, no any, no non-null assertions, no silenced errors.
    expect(code).not.toMatch(/\bas\s+(?!const\b)|\bany\b|[\w)\]]!\.|@ts-/);
    await expect(run(path.join(BIN_DIR, 'tsc'), ['-p', path.join(CLIENT_DIR, 'tsconfig.json')], { cwd: PROJECT_ROOT, timeout: 120_000 })).resolves.toBeDefined();
  });

  it('drives every operation through that client', async () => {
    const api = client.imageApi(server.url, PRO.key);
    expect(await client.account(api)).toMatchObject({ ok: true, plan: 'pro', remaining: null, maxBytes: 52_428_800 });
    expect(await client.account(client.imageApi(server.url))).toMatchObject({ ok: false, status: 401, code: 'UNAUTHORIZED', requestId: expect.any(String) });

    const key = crypto.randomUUID();
    const converted = await client.convert(api, photo(), 'webp', key);
    expect(converted).toMatchObject({ ok: true, replayed: false, result: { format: 'webp', filename: 'Canon_40D.webp', width: 100, height: 68 } });
    const retried = await client.convert(api, photo(), 'webp', key);
    expect(retried).toMatchObject({ ok: true, replayed: true });
    if (!converted.ok || !retried.ok) throw new Error('conversion failed');
    expect(retried.result).toEqual(converted.result);
    expect(await client.convert(api, photo(), 'png', key)).toMatchObject({ ok: false, status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });

    const whole = await client.download(api, converted.result);
    expect(whole).toMatchObject({ ok: true, status: 200, contentType: 'image/webp' });
    if (!whole.ok) throw new Error('download failed');
    expect(whole.bytes.length).toBe(converted.result.size);
    expect(new TextDecoder().decode(whole.bytes.subarray(8, 12))).toBe('WEBP');
    const head = await client.download(api, converted.result, 12);
    expect(head).toMatchObject({ ok: true, status: 206 });
    if (head.ok) expect(head.bytes).toEqual(whole.bytes.subarray(0, 12));
    expect(await client.download(api, { ...converted.result, uuid: '0'.repeat(32) })).toMatchObject({ ok: false, status: 404, code: 'NOT_FOUND' });

    expect(await client.crop(api, photo(), { x: 10, y: 5, width: 40, height: 30 })).toMatchObject({ ok: true, result: { format: 'jpg', width: 40, height: 30 } });
    expect(await client.crop(api, photo(), { x: 90, y: 0, width: 40, height: 30 })).toMatchObject({ ok: false, status: 422, code: 'INVALID_PARAMETERS', message: expect.stringContaining('100') });
    expect(await client.resize(api, photo(), 50)).toMatchObject({ ok: true, result: { format: 'png', width: 50, height: 34 } });
    expect(await client.thumbnail(api, photo(), 48)).toMatchObject({ ok: true, result: { format: 'webp', width: 48, height: 48 } });
    expect(await client.removeMetadata(api, photo())).toMatchObject({ ok: true, result: { format: 'jpg', width: 100, height: 68 } });
    const chain = await client.transform(api, photo(), [
      { op: 'crop', x: 10, y: 4, width: 80, height: 60 },
      { op: 'resize', width: 40, fit: 'inside' },
      { op: 'rotate', angle: 90 },
      { op: 'flip', axis: 'vertical' },
      { op: 'blur', sigma: 0.8 },
      { op: 'sharpen', sigma: 1 },
      { op: 'grayscale' },
    ], 'webp');
    expect(chain).toMatchObject({ ok: true, result: { format: 'webp', width: 30, height: 40 } });
    // Pro allows 10 requests a second, and the calls above were more: a new second for the rest.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const smallest = await client.smallest(api, photo(), 70);
    expect(smallest).toMatchObject({ ok: true, quality: expect.any(Number), score: expect.stringMatching(/^ssimulacra2 [\d.]+ for 70 \(picture\)$/) });
    if (smallest.ok) expect(['webp', 'avif', 'jpg']).toContain(smallest.format);
    expect(await client.smallest(api, photo(), 95)).toMatchObject({ ok: false, status: 422, code: 'INVALID_PARAMETERS', message: expect.stringContaining('quality_target') });

    const free = await client.account(client.imageApi(server.url, FREE.key));
    expect(free).toMatchObject({ ok: true, plan: 'free', maxBytes: 10_485_760 });
  });

  it("writes one JSON log line per request to the Worker's log, under the answer's request id", async () => {
    const response = await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${FREE.key}`, 'X-Request-Id': 'client-check-42' } });
    expect(response.headers.get('X-Request-Id')).toBe('client-check-42');
    await response.body?.cancel();
    let line: any;
    for (let attempt = 0; attempt < 50 && !line; attempt++) {
      line = server
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{"request_id":"client-check-42"'))
        .map((text) => JSON.parse(text))[0];
      if (!line) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(line).toMatchObject({ request_id: 'client-check-42', method: 'GET', route: '/api/v1/me', status: 200, user_id: expect.any(Number), error_code: null });
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
  });
});
