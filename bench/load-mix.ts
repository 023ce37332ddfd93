/// <reference types="node" />
/**
 * `npm run bench -- --load`: 12 clients send a mix of real work for 60 s through `npm run dev`, as
 * four Pro users, and the same mix goes to a plain Node service running sharp with one thread
 * (bench/sharp-service.ts), one side after the other. The mix, in ratio 5:2:1:3: a 1 MP JPEG
 * resized to 400 px WebP, a 12 MP JPEG to JPEG q80, a 3000 px PNG to WebP, a 64x48 PNG to AVIF.
 * Every answer's latency is kept (503s included); every file answered is downloaded and checked
 * (size, format, dimensions); CPU is what the server's processes used (all workerd processes of
 * the dev server; the service's process). The API's answers say what its isolate's ledger held at
 * most (X-Isolate-Peak-Bytes) and its workerd's resident size is sampled.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { PROJECT_ROOT } from '../src/cli/d1.ts';
import { freePort, startDevServer, type DevServer } from '../test/node/dev-server.ts';
import { createProUser, multipartBody, type MultipartBody } from './api.ts';
import { cpuMs, findWorkerd } from './memory.ts';
import { PHOTOS_DIR } from './workloads.ts';

interface MixEntry {
  name: string;
  weight: number;
  path: string;
  body: MultipartBody;
  format: string;
}

export interface LoadSide {
  side: string;
  seconds: number;
  answered: number;
  busy: number;
  /** Slowest 503 from the request's start, ms. */
  busySlowestMs: number | null;
  otherFailures: Record<string, number>;
  badDownloads: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  cpuMs: number;
  requestsPerCpuSecond: number;
  cpuMsPerRequest: number;
  /** The API's isolate ledger high-water mark and budget, and workerd's largest resident size (MiB). */
  ledgerPeakMiB?: number;
  ledgerBudgetMiB?: number;
  workerdPeakRssMiB?: number;
  perEntry: Record<string, { answered: number; busy: number; p50: number; slowestBusyMs: number | null; slowestMs: number }>;
}

const CLIENTS = 12;
const USERS = 4;

async function inputs(): Promise<MixEntry[]> {
  const dir = path.join(PROJECT_ROOT, 'test-output', 'inputs');
  mkdirSync(dir, { recursive: true });
  const made = async (name: string, make: () => Promise<Buffer>) => {
    const file = path.join(dir, name);
    if (!existsSync(file)) writeFileSync(file, await make());
    return readFileSync(file);
  };
  const photo1 = readFileSync(path.join(PHOTOS_DIR, 'photo-1mp.jpg'));
  const photo12 = readFileSync(path.join(PHOTOS_DIR, 'photo-12mp.jpg'));
  const png3000 = await made('photo-3000px.png', () => sharp(photo12).resize(3000).png().toBuffer());
  const png64 = await made('photo-64x48.png', () => sharp(photo1).resize(64, 48, { fit: 'fill' }).png().toBuffer());
  const file = (name: string, type: string, bytes: Uint8Array) => ({ name, type, bytes });
  return [
    { name: '1 MP JPEG -> 400 px WebP', weight: 5, path: '/api/v1/resize', format: 'webp', body: multipartBody({ width: '400', format: 'webp' }, file('photo.jpg', 'image/jpeg', photo1)) },
    { name: '12 MP JPEG -> JPEG q80', weight: 2, path: '/api/v1/convert', format: 'jpg', body: multipartBody({ format: 'jpg', quality: '80' }, file('photo.jpg', 'image/jpeg', photo12)) },
    { name: '3000 px PNG -> WebP', weight: 1, path: '/api/v1/convert', format: 'webp', body: multipartBody({ format: 'webp' }, file('photo.png', 'image/png', png3000)) },
    { name: '64x48 PNG -> AVIF', weight: 3, path: '/api/v1/convert', format: 'avif', body: multipartBody({ format: 'avif' }, file('tiny.png', 'image/png', png64)) },
  ];
}

/** The mix as a repeating sequence, its entries spread out (5:2:1:3 in every 11). */
function schedule(mix: MixEntry[]): MixEntry[] {
  const total = mix.reduce((sum, entry) => sum + entry.weight, 0);
  const slots: { at: number; entry: MixEntry }[] = [];
  for (const entry of mix) for (let i = 0; i < entry.weight; i++) slots.push({ at: (i + 0.5) / entry.weight + slots.length / (total * 100), entry });
  return slots.sort((a, b) => a.at - b.at).map((slot) => slot.entry);
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0);

async function checkDownload(url: string, expected: { size: number; width: number; height: number; format: string }): Promise<boolean> {
  const response = await fetch(url);
  if (response.status !== 200) return false;
  const bytes = Buffer.from(await response.arrayBuffer());
  if (bytes.byteLength !== expected.size) return false;
  const meta = await sharp(bytes).metadata();
  const format = meta.format === 'jpeg' ? 'jpg' : meta.format === 'heif' ? 'avif' : meta.format;
  return format === expected.format && meta.width === expected.width && meta.height === expected.height;
}

async function drive(baseUrl: string, keys: string[], mix: MixEntry[], seconds: number, processCpu: () => number, sample: () => void) {
  const sequence = schedule(mix);
  const latencies: number[] = [];
  const outcomes: { entry: string; status: number; ms: number; code?: string }[] = [];
  const downloads: Promise<boolean>[] = [];
  let ledgerPeak = 0;
  let ledgerBudget = 0;
  const cpuBefore = processCpu();
  const started = performance.now();
  const until = started + seconds * 1000;
  let next = 0;
  const sampler = setInterval(sample, 100);
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      const key = keys[client % keys.length];
      while (performance.now() < until) {
        const entry = sequence[next++ % sequence.length];
        const start = performance.now();
        let status = 0;
        let json: any = null;
        try {
          const response = await fetch(baseUrl + entry.path, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': entry.body.contentType },
            body: entry.body.body,
          });
          status = response.status;
          ledgerPeak = Math.max(ledgerPeak, Number(response.headers.get('X-Isolate-Peak-Bytes')) || 0);
          ledgerBudget = Math.max(ledgerBudget, Number(response.headers.get('X-Isolate-Budget-Bytes')) || 0);
          json = await response.json().catch(() => null);
        } catch {
          status = -1;
        }
        const ms = performance.now() - start;
        latencies.push(ms);
        outcomes.push({ entry: entry.name, status, ms, code: json?.error?.code });
        if (status === 200 && json?.data) downloads.push(checkDownload(json.data.download_url, { ...json.data, format: entry.format }).catch(() => false));
        if (status === 429 || status === 503) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }),
  );
  clearInterval(sampler);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = processCpu() - cpuBefore;
  const intact = await Promise.all(downloads);
  return { latencies, outcomes, elapsed, cpu, badDownloads: intact.filter((ok) => !ok).length, ledgerPeak, ledgerBudget };
}

function summarise(side: string, run: Awaited<ReturnType<typeof drive>>, mix: MixEntry[]): LoadSide {
  const sorted = [...run.latencies].sort((a, b) => a - b);
  const answered = run.outcomes.filter((o) => o.status === 200).length;
  const busy = run.outcomes.filter((o) => o.status === 503);
  const other: Record<string, number> = {};
  for (const o of run.outcomes) if (o.status !== 200 && o.status !== 503) other[`${o.status} ${o.code ?? ''}`.trim()] = (other[`${o.status} ${o.code ?? ''}`.trim()] ?? 0) + 1;
  const perEntry: LoadSide['perEntry'] = {};
  for (const entry of mix) {
    const mine = run.outcomes.filter((o) => o.entry === entry.name);
    const ok = mine.filter((o) => o.status === 200).map((o) => o.ms).sort((a, b) => a - b);
    const busyMs = mine.filter((o) => o.status === 503).map((o) => o.ms);
    perEntry[entry.name] = {
      answered: ok.length,
      busy: busyMs.length,
      p50: Math.round(percentile(ok, 50)),
      slowestBusyMs: busyMs.length ? Math.round(Math.max(...busyMs)) : null,
      slowestMs: Math.round(ok.at(-1) ?? 0),
    };
  }
  return {
    side,
    seconds: Math.round(run.elapsed),
    answered,
    busy: busy.length,
    busySlowestMs: busy.length ? Math.round(Math.max(...busy.map((o) => o.ms))) : null,
    otherFailures: other,
    badDownloads: run.badDownloads,
    latencyMs: { p50: Math.round(percentile(sorted, 50)), p95: Math.round(percentile(sorted, 95)), p99: Math.round(percentile(sorted, 99)), max: Math.round(sorted.at(-1) ?? 0) },
    cpuMs: Math.round(run.cpu),
    requestsPerCpuSecond: Math.round((answered / (run.cpu / 1000)) * 100) / 100,
    cpuMsPerRequest: Math.round(run.cpu / Math.max(1, answered)),
    perEntry,
  };
}

async function apiSide(seconds: number, mix: MixEntry[], verbose: boolean): Promise<LoadSide> {
  const server: DevServer = await startDevServer({ verbose, timeoutMs: 120_000, wranglerArgs: ['--var', 'DIAGNOSTIC_HEADERS:true'] });
  try {
    const keys: string[] = [];
    for (let i = 0; i < USERS; i++) keys.push(await createProUser(`load-${i}-${Date.now()}@bench.local`, server.persistTo));
    const workerd = () => findWorkerd(server.groups());
    const cpu = () => workerd().reduce((sum, p) => sum + cpuMs(p.pid), 0);
    let peakRssKb = 0;
    const sample = () => {
      for (const p of workerd().filter((p) => p.role === 'worker')) {
        try {
          peakRssKb = Math.max(peakRssKb, Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'))?.[1] ?? 0));
        } catch {
          // gone
        }
      }
    };
    // Warm: every entry once per user (codecs compiled, users' objects started).
    for (const key of keys) for (const entry of mix) await fetch(server.url + entry.path, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': entry.body.contentType }, body: entry.body.body }).then((r) => r.arrayBuffer());
    const run = await drive(server.url, keys, mix, seconds, cpu, sample);
    const summary = summarise('this API (npm run dev)', run, mix);
    return { ...summary, ledgerPeakMiB: round1(run.ledgerPeak / 2 ** 20), ledgerBudgetMiB: round1(run.ledgerBudget / 2 ** 20), workerdPeakRssMiB: round1(peakRssKb / 1024) };
  } finally {
    await server.stop();
  }
}

/** The sharp service (bench/sharp-service.ts) on a free port, with its files in a temporary folder. */
export async function startSharpService(): Promise<{ base: string; pid: number; stop(): void }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'sharp-service-'));
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bench', 'sharp-service.ts'), String(port), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = () => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the sharp service exited (${code})`)));
    });
  } catch (error) {
    stop();
    throw error;
  }
  return { base: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
}

async function sharpSide(seconds: number, mix: MixEntry[]): Promise<LoadSide> {
  const service = await startSharpService();
  try {
    for (const entry of mix) await fetch(service.base + entry.path, { method: 'POST', headers: { 'Content-Type': entry.body.contentType }, body: entry.body.body }).then((r) => r.arrayBuffer());
    const run = await drive(service.base, ['-'], mix, seconds, () => cpuMs(service.pid), () => {});
    return summarise('sharp service (Node, one thread)', run, mix);
  } finally {
    service.stop();
  }
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export async function runLoadMix(seconds: number, verbose: boolean, log: (line: string) => void): Promise<LoadSide[]> {
  const mix = await inputs();
  log(`load: ${CLIENTS} clients, ${seconds} s, the API first`);
  const api = await apiSide(seconds, mix, verbose);
  log('load: the sharp service');
  const service = await sharpSide(seconds, mix);
  return [api, service];
}

export function loadTable(sides: LoadSide[], when: string): string {
  const [api, service] = sides;
  const fail = (line: string, ok: boolean) => `${line}${ok ? '' : ' (missed)'}`;
  const rows = sides.map(
    (s) =>
      `| ${s.side} | ${s.answered} | ${s.busy}${s.busySlowestMs !== null ? ` (slowest ${s.busySlowestMs} ms)` : ''} | ${Object.entries(s.otherFailures).map(([k, v]) => `${v} x ${k}`).join(', ') || 'none'} | ${s.badDownloads} | ${s.latencyMs.p50} / ${s.latencyMs.p95} / ${s.latencyMs.p99} ms | ${s.requestsPerCpuSecond} | ${s.cpuMsPerRequest} ms | ${s.ledgerPeakMiB !== undefined ? `${s.ledgerPeakMiB} of ${s.ledgerBudgetMiB} MiB` : ''} | ${s.workerdPeakRssMiB !== undefined ? `${s.workerdPeakRssMiB} MiB` : ''} |`,
  );
  const entries = Object.keys(api.perEntry).map(
    (name) => {
      const [a, b] = [api.perEntry[name], service.perEntry[name]];
      return `| ${name} | ${a.answered} / ${a.busy} | ${a.p50} / ${a.slowestMs} ms | ${a.slowestBusyMs === null ? '-' : `${a.slowestBusyMs} ms`} | ${b.answered} | ${b.p50} / ${b.slowestMs} ms |`;
    },
  );
  return [
    `Measured ${when} by \`npm run bench -- --load\`: ${CLIENTS} clients for ${api.seconds} s each side, as ${USERS} Pro users, the mix 5:2:1:3 of a 1 MP JPEG to 400 px WebP, a 12 MP JPEG to JPEG q80, a 3000 px PNG to WebP and a 64x48 PNG to AVIF; every answered file downloaded and checked.`,
    '',
    '| | answered | 503 | other failures | bad downloads | p50 / p95 / p99 | requests per CPU-second | CPU per request | isolate ledger peak | workerd RSS peak |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '| request | API answered / 503 | API p50 / slowest | API slowest 503 | sharp service answered | sharp service p50 / slowest |',
    '|---|---|---|---|---|---|',
    ...entries,
    '',
    'Against the targets: ' +
      [
        fail(`5xx other than 503: ${Object.keys(api.otherFailures).filter((k) => k.startsWith('5')).length === 0 ? 'none' : 'some'}`, Object.keys(api.otherFailures).every((k) => !k.startsWith('5'))),
        fail(`503s answered within ${api.busySlowestMs ?? 0} ms`, (api.busySlowestMs ?? 0) <= 2000),
        fail(`bad downloads ${api.badDownloads}`, api.badDownloads === 0),
        fail(`p99 ${api.latencyMs.p99} ms against ${service.latencyMs.p99} ms`, api.latencyMs.p99 <= service.latencyMs.p99),
        fail(`CPU per request ${api.cpuMsPerRequest} ms against ${service.cpuMsPerRequest} ms`, api.cpuMsPerRequest <= service.cpuMsPerRequest),
        fail(`ledger ${api.ledgerPeakMiB} of ${api.ledgerBudgetMiB} MiB`, (api.ledgerPeakMiB ?? 0) <= (api.ledgerBudgetMiB ?? 0)),
      ].join('; ') +
      '.',
  ].join('\n');
}
