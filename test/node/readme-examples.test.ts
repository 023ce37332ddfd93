/// <reference types="node" />
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/cli/d1';
import { DEMO_ACCOUNTS, startDevServer, type DevServer } from './dev-server';

const run = promisify(execFile);

/** The ```bash blocks of one README section, in order, each with the ```json answer shown right after it, if any. */
function examples(section: string): { script: string; answer: string | null }[] {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const body = readme.slice(start, end === -1 ? undefined : end);
  const blocks = [...body.matchAll(/```(bash|json)\n([\s\S]*?)```/g)].map((match) => ({ language: match[1], text: match[2].trim() }));
  return blocks.flatMap((block, i) =>
    block.language === 'bash' ? [{ script: block.text, answer: blocks[i + 1]?.language === 'json' ? blocks[i + 1].text : null }] : [],
  );
}

const bashBlocks = (section: string) => examples(section).map((example) => example.script);

/** An answer with what differs from call to call (ids, times) replaced by placeholders. */
function comparable(answer: unknown, url: string): unknown {
  return JSON.parse(
    JSON.stringify(answer)
      .replaceAll(url, 'http://localhost:8787')
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<request id>')
      .replace(/\b[0-9a-f]{32}\b/g, '<uuid>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>'),
  );
}

describe('the README, run against npm run dev', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startDevServer();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(path.join(PROJECT_ROOT, 'result.png'), { force: true });
  });

  // The examples name http://localhost:8787; the test server has its own port.
  const shell = (script: string, env: Record<string, string> = {}) =>
    run('bash', ['-euo', 'pipefail', '-c', script.replaceAll('http://localhost:8787', server.url)], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });

  it('has curl examples for every endpoint, and each works as written and answers what the README shows', async () => {
    const blocks = examples('Examples');
    for (const endpoint of ['/api/v1/me', '/api/v1/convert', '/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/transform', '/api/v1/openapi.json', '-o result.png', 'Idempotency-Key']) {
      expect(blocks.some(({ script }) => script.includes(endpoint)), endpoint).toBe(true);
    }
    expect(blocks.filter(({ answer }) => answer !== null).length).toBeGreaterThanOrEqual(3);
    // One call, several steps: the transform example chains at least three.
    expect(blocks.some(({ script }) => script.includes('/api/v1/transform') && (script.match(/"op":/g) ?? []).length >= 3)).toBe(true);
    for (const { script, answer } of blocks) {
      const { stdout } = await shell(script);
      if (script.includes('-o result.png')) {
        expect(stdout).toMatch(/^HTTP\/1\.1 200/);
        expect(stdout).toMatch(/content-type: image\/png/i);
        expect(readFileSync(path.join(PROJECT_ROOT, 'result.png')).subarray(1, 4).toString()).toBe('PNG');
        continue;
      }
      const outputs = stdout.trim().split('\n').map((line) => JSON.parse(line));
      if (answer !== null) expect(comparable(outputs, server.url), script).toEqual(comparable([JSON.parse(answer)], 'http://localhost:8787'));
      if (script.includes('openapi.json')) expect(outputs[0].openapi).toBe('3.1.0');
      else if (!script.includes('Authorization')) expect(outputs[0].error.code).toBe('UNAUTHORIZED');
      else for (const output of outputs) expect(output, script).toMatchObject({ success: true });
      if (script.includes('Idempotency-Key')) {
        expect(outputs).toHaveLength(2);
        expect(outputs[1].data.uuid).toBe(outputs[0].data.uuid);
      }
    }
  });

  it('runs the operator examples against the running server, and their keys work at once', async () => {
    const env = { IMAGE_API_PERSIST_TO: server.persistTo };
    const [createUser, createKey, ...rest] = bashBlocks('Operator command')[0].split('\n');
    const userKey = (await shell(createUser, env)).stdout.trim().split('\n').pop()!;
    const laptopKey = (await shell(createKey, env)).stdout.trim().split('\n').pop()!;
    const me = await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${userKey}` } });
    expect(((await me.json()) as any).data.user).toMatchObject({ email: 'alice@example.com', plan: 'pro', subscription_ends_at: '2027-01-01T00:00:00.000Z' });

    const revoke = rest.find((line) => line.includes('revoke-key'))!.replace('imgk_AbCdEfG', laptopKey.slice(0, 12));
    await shell(revoke, env);
    expect((await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${laptopKey}` } })).status).toBe(401);
    for (const line of rest.filter((line) => !line.includes('revoke-key'))) await shell(line, env);
    // A key this Worker has not seen yet shows the new plan at once; one it has seen, within a minute (README, Consistency).
    const newKey = (await shell(createKey.replace('laptop', 'desktop'), env)).stdout.trim().split('\n').pop()!;
    const after = await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${newKey}` } });
    expect(((await after.json()) as any).data.user.plan).toBe('free');
  });

  it('converts a 12 MP photo end to end, and refuses a result over the pixel limit naming the limit', async () => {
    const photo = readFileSync(path.join(PROJECT_ROOT, '../shared/corpus/photos/photo-12mp.jpg'));
    const call = async (operation: string, fields: Record<string, string>) => {
      const form = new FormData();
      form.append('file', new File([photo], 'photo-12mp.jpg'));
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      const response = await fetch(`${server.url}/api/v1/${operation}`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${DEMO_ACCOUNTS[1].key}` } });
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text.startsWith('{') ? text : JSON.stringify({ unexpected: text })) };
    };
    for (const format of ['jpg', 'webp', 'png']) {
      const started = performance.now();
      const result = await call('convert', { format });
      const ms = performance.now() - started;
      expect(result.body).toMatchObject({ success: true, data: { width: 4000, height: 3000, format } });
      console.log(`12 MP JPEG -> ${format} through wrangler dev: ${Math.round(ms)} ms, ${result.body.data.size} bytes`);
    }

    // 10000x7500 is 75 megapixels: over the output pixel limit, refused before anything is decoded.
    const huge = await call('resize', { width: '10000', format: 'webp' });
    expect(huge.status).toBe(422);
    expect(huge.body.error.code).toBe('FILE_TOO_LARGE');
    expect(huge.body.error.message).toMatch(/the limit for output images is 50 megapixels/);
  });
});
