/// <reference types="node" />
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/cli/d1';
import { DEMO_ACCOUNTS, startDevServer, type DevServer } from './dev-server';

const run = promisify(execFile);

/** The ```bash blocks of one README section, in order. */
function bashBlocks(section: string): string[] {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const body = readme.slice(start, end === -1 ? undefined : end);
  return [...body.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1].trim());
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

  it('has curl examples for every endpoint, and each works as written', async () => {
    const blocks = bashBlocks('Examples');
    for (const endpoint of ['/api/v1/me', '/api/v1/convert', '/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/openapi.json', '-o result.png']) {
      expect(blocks.some((block) => block.includes(endpoint)), endpoint).toBe(true);
    }
    for (const block of blocks) {
      const { stdout } = await shell(block);
      if (block.includes('-o result.png')) {
        expect(stdout).toMatch(/^HTTP\/1\.1 200/);
        expect(stdout).toMatch(/content-type: image\/png/i);
        expect(readFileSync(path.join(PROJECT_ROOT, 'result.png')).subarray(1, 4).toString()).toBe('PNG');
      } else if (!block.includes('Authorization')) {
        expect(stdout).toMatch(block.includes('openapi.json') ? /"openapi":"3\.1\.0"/ : /"code":"UNAUTHORIZED"/);
      } else {
        expect(JSON.parse(stdout), block).toMatchObject({ success: true });
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
    const after = await fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${userKey}` } });
    expect(((await after.json()) as any).data.user.plan).toBe('free');
  });

  it('converts a 12 MP photo end to end, and refuses a result too large for a Worker with the size that fits', async () => {
    const photo = readFileSync(path.join(PROJECT_ROOT, '../shared/corpus/photos/photo-12mp.jpg'));
    const convert = async (format: string) => {
      const form = new FormData();
      form.append('file', new File([photo], 'photo-12mp.jpg'));
      form.append('format', format);
      const response = await fetch(`${server.url}/api/v1/convert`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${DEMO_ACCOUNTS[1].key}` } });
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text.startsWith('{') ? text : JSON.stringify({ unexpected: text })) };
    };
    const started = performance.now();
    const jpeg = await convert('jpg');
    const ms = performance.now() - started;
    expect(jpeg.body).toMatchObject({ success: true, data: { width: 4000, height: 3000, format: 'jpg' } });
    console.log(`12 MP JPEG -> JPEG q80 through wrangler dev: ${Math.round(ms)} ms, ${jpeg.body.data.size} bytes`);

    const webp = await convert('webp');
    expect(webp.status).toBe(422);
    expect(webp.body.error.code).toBe('FILE_TOO_LARGE');
    expect(webp.body.error.message).toMatch(/WebP results can be at most 5\.\d megapixels/);
  });
});
