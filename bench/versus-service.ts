/// <reference types="node" />
/**
 * `npm run bench -- --versus-service`: issue 37's two end-to-end lines, in wall time through
 * `npm run dev`: the 12 MP PNG to JPEG q80 (W9) against sharp in this process, and the 1 MP JPEG
 * resized to 400 px WebP (W6) against the sharp service (bench/sharp-service.ts: the same
 * multipart upload parsed by Node, sharp with one thread, the file written, JSON answered). The
 * three sides alternate call by call, so a busy machine slows them alike; medians after one
 * warm-up each. The table goes into docs/performance.md between its versus-table markers.
 */
import sharp, { type Sharp } from 'sharp';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startDevServer } from '../test/node/dev-server.ts';
import { largeInput } from '../test/support/large-inputs.ts';
import { ApiClient, DEMO_PRO_KEY, multipartBody, type MultipartBody } from './api.ts';
import { startSharpService } from './load-mix.ts';
import { PHOTOS_DIR } from './workloads.ts';
import { median } from './timing.ts';

export interface VersusRow {
  workload: string;
  apiMs: number;
  serviceMs: number;
  sharpMs: number;
  /** What the API is held to: against the service or against sharp in process. */
  against: 'service' | 'sharp';
  bound: number;
  ratio: number;
}

interface Case {
  workload: string;
  path: string;
  body: MultipartBody;
  input: Buffer;
  sharp: (input: Buffer) => Sharp;
  against: VersusRow['against'];
  bound: number;
}

async function timed(job: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await job();
  return performance.now() - start;
}

async function cases(): Promise<Case[]> {
  const photo1 = readFileSync(path.join(PHOTOS_DIR, 'photo-1mp.jpg'));
  const png12 = Buffer.from(await largeInput('png-12mp.png'));
  return [
    {
      workload: 'W9 12 MP PNG -> JPEG q80',
      path: '/api/v1/convert',
      body: multipartBody({ format: 'jpg', quality: '80' }, { name: 'photo.png', type: 'image/png', bytes: png12 }),
      input: png12,
      sharp: (input) => sharp(input).jpeg({ quality: 80 }),
      against: 'sharp',
      bound: 2.0,
    },
    {
      workload: 'W6 1 MP JPEG -> 400 px WebP',
      path: '/api/v1/resize',
      body: multipartBody({ width: '400', format: 'webp' }, { name: 'photo.jpg', type: 'image/jpeg', bytes: photo1 }),
      input: photo1,
      sharp: (input) => sharp(input).rotate().resize(400).webp({ quality: 80 }),
      against: 'service',
      bound: 1.3,
    },
  ];
}

export async function runVersusService(runs: number, verbose: boolean, log: (line: string) => void): Promise<VersusRow[]> {
  sharp.concurrency(1);
  sharp.cache(false);
  const server = await startDevServer({ verbose, timeoutMs: 120_000 });
  const service = await startSharpService();
  try {
    const api = new ApiClient(server.url);
    const rows: VersusRow[] = [];
    for (const c of await cases()) {
      const times = { api: [] as number[], service: [] as number[], sharp: [] as number[] };
      for (let run = -1; run < runs; run++) {
        const apiMs = await timed(() => api.process(DEMO_PRO_KEY, c.path, c.body));
        const serviceMs = await timed(async () => {
          const response = await fetch(service.base + c.path, { method: 'POST', headers: { 'Content-Type': c.body.contentType }, body: c.body.body });
          if (response.status !== 200) throw new Error(`the sharp service answered ${response.status}: ${await response.text()}`);
          await response.json();
        });
        const sharpMs = await timed(() => c.sharp(c.input).toBuffer());
        if (run < 0) continue;
        times.api.push(apiMs);
        times.service.push(serviceMs);
        times.sharp.push(sharpMs);
        log(`versus: ${c.workload} run ${run + 1}/${runs}: API ${Math.round(apiMs)} ms, service ${Math.round(serviceMs)} ms, sharp ${Math.round(sharpMs)} ms`);
      }
      const apiMs = median(times.api);
      const reference = median(c.against === 'service' ? times.service : times.sharp);
      rows.push({
        workload: c.workload,
        apiMs: Math.round(apiMs),
        serviceMs: Math.round(median(times.service)),
        sharpMs: Math.round(median(times.sharp)),
        against: c.against,
        bound: c.bound,
        ratio: Math.round((apiMs / reference) * 100) / 100,
      });
    }
    return rows;
  } finally {
    service.stop();
    await server.stop();
  }
}

export function versusTable(rows: VersusRow[], runs: number, when: string, load: string): string {
  const lines = rows.map(
    (r) =>
      `| ${r.workload} | ${r.apiMs} ms | ${r.serviceMs} ms | ${r.sharpMs} ms | ${r.ratio}x ${r.against === 'service' ? 'the service' : 'sharp'} | <= ${r.bound}x | ${r.ratio <= r.bound ? 'yes' : 'no (missed)'} |`,
  );
  return [
    `Measured ${when} by \`npm run bench -- --versus-service\`: wall time of each call, medians of ${runs} after one warm-up, the three sides alternating (load average ${load}).`,
    '',
    '| workload | API (npm run dev) | sharp service | sharp in process | ratio | bound | met |',
    '|---|---|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}
