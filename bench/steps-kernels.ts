/**
 * The blur, sharpen and grayscale stages (src/image/stages) in Node 24 against sharp in the same
 * process, on the same raw pixels: a 6 MP photo (the 24 MP corpus photo at 3000x2000), opaque and
 * with an alpha channel. Our stage reads the picture in bands of 64 rows and hands its own bands on
 * (nothing copied around it); sharp runs `blur(sigma)`, `sharpen({ sigma })` or `greyscale()` from
 * raw pixels to raw pixels with one thread and no cache. Medians of --runs (default 5) after a
 * warm-up, wall and CPU time, with the load average beside them (the machine is shared).
 *
 *   npx node --experimental-transform-types --import ./bench/node-hooks.ts bench/steps-kernels.ts [--runs 5] [--only blur,sharpen,grayscale]
 *
 * Writes the table to stdout and everything to test-output/bench/steps-kernels.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { type Timing, cpuNow, median } from './timing.ts';

// The Worker's modules, loaded through bench/node-hooks.ts (imported by URL: see jpeg-codec.ts).
const load = (file: string) => import(new URL(file, import.meta.url).href);
const { blurRows } = await load('../src/image/stages/blur.ts');
const { sharpenRows } = await load('../src/image/stages/sharpen.ts');
const { grayscaleRows } = await load('../src/image/stages/grayscale.ts');
const { pictureRows } = await load('../src/image/stages/rows.ts');

const root = path.resolve(import.meta.dirname, '..');
const option = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const RUNS = Number(option('runs') ?? 5);
const ONLY = option('only')?.split(',');
sharp.concurrency(1);
sharp.cache(false);

/** Median wall and CPU time of RUNS runs after one warm-up. */
async function measure(run: () => Promise<unknown>): Promise<Timing> {
  await run();
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const [wall, cpu] = [performance.now(), cpuNow()];
    await run();
    walls.push(performance.now() - wall);
    cpus.push(cpuNow() - cpu);
  }
  return { wallMs: median(walls), cpuMs: median(cpus) };
}

const photo = readFileSync(path.join(root, '../shared/corpus/photos/photo-24mp.jpg'));
const { data: rgb, info } = await sharp(photo).resize(3000, 2000).raw().toBuffer({ resolveWithObject: true });
const { width, height } = info;
const pixels = width * height;
const opaque = new Uint8Array(pixels * 4);
const withAlpha = new Uint8Array(pixels * 4);
for (let i = 0; i < pixels; i++) {
  opaque.set(rgb.subarray(i * 3, i * 3 + 3), i * 4);
  opaque[i * 4 + 3] = 255;
  withAlpha.set(rgb.subarray(i * 3, i * 3 + 3), i * 4);
  // Opaque on the left, transparent on the right, every alpha between.
  withAlpha[i * 4 + 3] = Math.max(0, Math.min(255, Math.round(((width - (i % width)) / width) * 383 - 64)));
}

type Stage = (source: unknown) => { read(): Promise<{ rows: number } | null>; close(): void };

/** Our stage over the whole picture in bands of 64 rows, every band read. */
async function ours(data: Uint8Array, alpha: boolean, stage: Stage): Promise<void> {
  const source = stage(pictureRows({ data, width, height }, { model: 'rgba', alpha, grey: false }));
  try {
    while (await source.read());
  } finally {
    source.close();
  }
}

/** sharp on the same pixels: three channels when opaque (so that it does not treat a fourth as alpha), four with alpha. */
function theirs(alpha: boolean, apply: (image: Sharp) => Sharp): () => Promise<unknown> {
  const input = alpha ? withAlpha : Buffer.from(rgb);
  return () => apply(sharp(input, { raw: { width, height, channels: alpha ? 4 : 3 } })).raw().toBuffer();
}

const cases: { what: string; kind: string; sigma?: number; alpha: boolean; stage: Stage; sharp: (image: Sharp) => Sharp }[] = [];
for (const alpha of [false, true]) {
  for (const sigma of [0.8, 2, 8, 50, 400]) cases.push({ what: `blur sigma ${sigma}`, kind: 'blur', sigma, alpha, stage: (s) => blurRows(s, sigma), sharp: (i) => i.blur(sigma) });
  for (const sigma of [1, 5]) cases.push({ what: `sharpen sigma ${sigma}`, kind: 'sharpen', sigma, alpha, stage: (s) => sharpenRows(s, sigma), sharp: (i) => i.sharpen({ sigma }) });
  cases.push({ what: 'grayscale', kind: 'grayscale', alpha, stage: (s) => grayscaleRows(s), sharp: (i) => i.greyscale() });
}

const ms = (value: number) => (value < 10 ? Number(value.toFixed(1)) : Math.round(value));
const rows: Record<string, string | number>[] = [];
for (const c of cases) {
  if (ONLY && !ONLY.includes(c.kind)) continue;
  const load1 = loadavg()[0];
  // grayscale changes its input in place: it gets a copy of its own (later runs make grey pixels grey, the same work).
  const input = c.kind === 'grayscale' ? Uint8Array.from(c.alpha ? withAlpha : opaque) : c.alpha ? withAlpha : opaque;
  const us = await measure(() => ours(input, c.alpha, c.stage));
  // sharp runs the whole mask at every pixel: at sigma 400 that took 197 s of wall time here (2026-11-28).
  const them = c.sigma !== undefined && c.sigma > 100 ? null : await measure(theirs(c.alpha, c.sharp));
  const row = {
    what: `${c.what}${c.alpha ? ', alpha' : ''}`,
    wall_ms: ms(us.wallMs),
    cpu_ms: ms(us.cpuMs),
    ns_per_pixel: Number(((us.cpuMs * 1e6) / pixels).toFixed(1)),
    sharp_wall_ms: them ? ms(them.wallMs) : '-',
    sharp_cpu_ms: them ? ms(them.cpuMs) : '-',
    load: `${load1.toFixed(1)}-${loadavg()[0].toFixed(1)}`,
  };
  rows.push(row);
  console.error(JSON.stringify(row));
}

console.log(`${width}x${height}, medians of ${RUNS}, Node ${process.version}\n`);
console.log('| step | ours wall / CPU ms | ns a pixel (CPU) | sharp wall / CPU ms | load |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${r.wall_ms} / ${r.cpu_ms} | ${r.ns_per_pixel} | ${r.sharp_wall_ms} / ${r.sharp_cpu_ms} | ${r.load} |`);
mkdirSync(path.join(root, 'test-output/bench'), { recursive: true });
writeFileSync(path.join(root, 'test-output/bench/steps-kernels.json'), JSON.stringify({ width, height, runs: RUNS, node: process.version, rows }, null, 2));
