/// <reference types="node" />
/**
 * Bundle size: `wrangler deploy --dry-run --outdir <tmp>`. Like wrangler, the upload is every
 * module it wrote (JavaScript, WebAssembly, data) except source maps, and the gzip figure is
 * zlib's default gzip of all of them concatenated. wrangler's own "Total Upload" line is kept
 * as a cross-check. The Workers Free plan refuses Workers over 3 MiB gzipped.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { BIN_DIR, PROJECT_ROOT, wranglerEnv } from '../src/cli/d1.ts';

export const FREE_PLAN_GZIP_LIMIT = 3 * 1024 * 1024;

export interface BundleResult {
  files: { name: string; bytes: number; gzipBytes: number }[];
  totalBytes: number;
  gzipBytes: number;
  wranglerReport: string | null;
  limitGzipBytes: number;
  pass: boolean;
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env: { ...wranglerEnv(), NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...listFiles(full, prefix + entry + '/'));
    else out.push(prefix + entry);
  }
  return out.sort();
}

export async function measureBundle(): Promise<BundleResult> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'bench-bundle-'));
  try {
    const { code, output } = await run(path.join(BIN_DIR, 'wrangler'), ['deploy', '--dry-run', '--outdir', outdir]);
    if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${code}):\n${output.slice(-3000)}`);
    // eslint-disable-next-line no-control-regex
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
    const report = /Total Upload:\s*(.+)/.exec(plain)?.[1].trim() ?? null;
    const names = listFiles(outdir).filter((name) => !name.endsWith('.map') && name !== 'README.md');
    const contents = names.map((name) => readFileSync(path.join(outdir, name)));
    const files = names
      .map((name, i) => ({ name: name.replace(/^[0-9a-f]{40}-/, ''), bytes: contents[i].length, gzipBytes: gzipSync(contents[i]).length }))
      .sort((a, b) => b.bytes - a.bytes);
    const totalBytes = contents.reduce((sum, c) => sum + c.length, 0);
    const gzipBytes = gzipSync(Buffer.concat(contents)).length;
    return { files, totalBytes, gzipBytes, wranglerReport: report, limitGzipBytes: FREE_PLAN_GZIP_LIMIT, pass: gzipBytes < FREE_PLAN_GZIP_LIMIT };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
