/**
 * Calibration of quality=auto (issue 39; docs/decisions.md "quality=auto"): the repository's photos
 * at 1-3 MP (test/support/quality-photos.ts: QUALITY_PHOTOS, the set the tests measure, and the
 * nine photos of the 24 MP mosaic), each converted by the service's own pipeline (processImage,
 * from a PNG of exactly the photo's pixels) at q80 and with quality=auto, and judged by DSSIM
 * (test/support/dssim.ts, the independent metric) and SSIMULACRA 2 recomputed from the file. Per
 * format and set: the total bytes against q80's, the worst photo by each metric, how many missed
 * their target; each photo's quality, score, bytes and DSSIM.
 *
 *   npx node --experimental-transform-types --import ./bench/node-hooks.ts bench/quality-calibration.ts [--formats jpeg,webp,avif] [--sets photos,mosaic] [--target-jpeg 70] [--butteraugli <binary>]
 *
 * --butteraugli also judges every result by a butteraugli command given by its path, which takes
 * `original.png distorted.png` and prints the max-norm distance first: Debian's libjxl-devtools has
 * one (/usr/bin/butteraugli_main), or build google/butteraugli's. Nothing here installs or ships it.
 *
 * --curves instead encodes every photo at q56-92 (SSIMULACRA 2, DSSIM and bytes at each) and prints,
 * for each metric as the chooser (every photo at the lowest quality meeting a target) and the
 * other as the judge, the fewest bytes against q80 that keep the judge's worst photo no worse than
 * at q80: what any choice of target could reach (test-output/bench/quality-curves.json).
 *
 * Writes the table to stdout and everything to test-output/bench/quality-calibration.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { dssim } from '../test/support/dssim.ts';
import { MOSAIC_PHOTOS, photoPng, QUALITY_PHOTOS, type PhotoSource } from '../test/support/quality-photos.ts';

const load = (file: string) => import(new URL(file, import.meta.url).href);
const { FORMATS } = await load('../src/image/formats/index.ts');
const { processImage } = await load('../src/image/pipeline.ts');
const { pictureRows } = await load('../src/image/stages/rows.ts');
const { scoreRows } = await load('../src/image/quality/score-rows.ts');
const { AUTO_QUALITY } = await load('../src/image/quality/calibration.ts');

type Format = 'jpeg' | 'webp' | 'avif';
interface Photo {
  name: string;
  set: string;
  png: Uint8Array;
  data: Uint8Array;
  width: number;
  height: number;
}

const root = path.resolve(import.meta.dirname, '..');
const corpus = path.resolve(root, '../shared/corpus');
const argument = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const formats = (argument('formats') ?? 'jpeg,webp,avif').split(',') as Format[];
const sets = (argument('sets') ?? 'photos,mosaic').split(',');
const butteraugliBinary = argument('butteraugli');
const scratch = mkdtempSync(path.join(tmpdir(), 'quality-calibration-'));
const LIMITS = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };
const traits = { model: 'rgba' as const, alpha: false, grey: false };

async function decode(format: Format, bytes: Uint8Array): Promise<{ data: Uint8Array; width: number; height: number }> {
  const source = await FORMATS[format].read(bytes).decode({ shrink: 1, region: null });
  const data = new Uint8Array(source.width * source.height * 4);
  for (let band = await source.read(); band; band = await source.read()) data.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
  source.close();
  return { data, width: source.width, height: source.height };
}

async function photos(): Promise<Photo[]> {
  const chosen: [string, readonly PhotoSource[]][] = [
    ['photos', QUALITY_PHOTOS],
    ['mosaic', MOSAIC_PHOTOS],
  ];
  const out: Photo[] = [];
  for (const [set, sources] of chosen.filter(([name]) => sets.includes(name))) {
    for (const source of sources) {
      const png = await photoPng(source, new Uint8Array(readFileSync(path.join(corpus, source.file))));
      out.push({ name: source.name, set, png, ...(await decode('png' as Format, png)) });
    }
  }
  return out;
}

/** The butteraugli distance by the command given (NaN without one). */
async function butteraugli(original: Photo, distorted: { data: Uint8Array; width: number; height: number }): Promise<number> {
  if (!butteraugliBinary) return NaN;
  const files = [path.join(scratch, 'a.png'), path.join(scratch, 'b.png')];
  for (const [i, picture] of [original, distorted].entries()) {
    await sharp(Buffer.from(picture.data), { raw: { width: picture.width, height: picture.height, channels: 4 } }).removeAlpha().png().toFile(files[i]);
  }
  return Number(execFileSync(butteraugliBinary, files, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split(/\s+/)[0]);
}

interface Judged {
  quality: number;
  bytes: number;
  reported?: number;
  s2: number;
  dssim: number;
  butteraugli: number;
  ms: number;
}

async function convert(format: Format, photo: Photo, quality: number | 'auto'): Promise<Judged> {
  const qualityTarget = argument(`target-${format}`) ? Number(argument(`target-${format}`)) : undefined;
  const started = performance.now();
  const result = await processImage(photo.png, { steps: [], format, quality, qualityTarget }, LIMITS);
  const ms = performance.now() - started;
  const decoded = await decode(format, result.bytes);
  const s2 = await scoreRows(pictureRows({ ...photo, data: photo.data.slice() }, traits), pictureRows(decoded, traits));
  return { quality: result.quality, bytes: result.size, reported: result.score?.value, s2, dssim: dssim(photo, decoded), butteraugli: await butteraugli(photo, decoded), ms };
}

type Point = { quality: number; bytes: number; s2: number; dssim: number };

/** A curve's value at an integer quality between its points: linear, bytes geometric. */
function at(points: Point[], quality: number): Point {
  const upper = points.findIndex((p) => p.quality >= quality);
  if (upper <= 0) return points[Math.max(0, upper)];
  const [a, b] = [points[upper - 1], points[upper]];
  const t = (quality - a.quality) / (b.quality - a.quality);
  return { quality, bytes: Math.exp(Math.log(a.bytes) * (1 - t) + Math.log(b.bytes) * t), s2: a.s2 + (b.s2 - a.s2) * t, dssim: a.dssim + (b.dssim - a.dssim) * t };
}

/**
 * For each metric as the one choosing (each photo at the lowest quality whose score meets a
 * target) and the other as the judge: the fewest bytes against q80 of a target whose choice keeps
 * the judge's worst photo no worse than at q80 (the issue's "Done when"), or none.
 */
function analyseCurves(format: string, curves: { name: string; points: Point[] }[]): void {
  const qualities = Array.from({ length: 37 }, (_, i) => 56 + i);
  const tables = curves.map((c) => qualities.map((q) => at(c.points, q)));
  const q80 = tables.map((table) => table[80 - 56]);
  const q80Bytes = q80.reduce((sum, p) => sum + p.bytes, 0);
  const worst = (judge: 's2' | 'dssim', points: Point[]) => (judge === 's2' ? Math.min(...points.map((p) => p.s2)) : Math.max(...points.map((p) => p.dssim)));
  const noWorse = (judge: 's2' | 'dssim', a: number, b: number) => (judge === 's2' ? a >= b - 1e-9 : a <= b + 1e-12);
  const targets = { s2: Array.from({ length: 600 }, (_, i) => 50 + i / 20), dssim: Array.from({ length: 400 }, (_, i) => (0.5 + i / 50) / 1e3) };
  for (const chooser of ['s2', 'dssim'] as const) {
    for (const judge of ['s2', 'dssim'] as const) {
      let best: { bytes: number; target: number } | null = null;
      for (const target of targets[chooser]) {
        const chosen = tables.map((table) => table.find((p) => (chooser === 's2' ? p.s2 >= target : p.dssim <= target)) ?? table.at(-1)!);
        if (!noWorse(judge, worst(judge, chosen), worst(judge, q80))) continue;
        const bytes = chosen.reduce((sum, p) => sum + p.bytes, 0) / q80Bytes;
        if (!best || bytes < best.bytes) best = { bytes, target };
      }
      console.log(`${format}: chosen by ${chooser}, judged by ${judge}: ${best ? `${best.bytes.toFixed(3)} of q80's bytes at target ${best.target.toPrecision(4)}` : 'no target'}`);
    }
  }
}

const set = await photos();
console.log(`${set.length} photos, ${set.map((p) => `${p.name} ${p.width}x${p.height}`).join(', ')}; load ${loadavg()[0].toFixed(2)}`);
mkdirSync(path.join(root, 'test-output/bench'), { recursive: true });

if (process.argv.includes('--curves')) {
  const curves: Record<string, { name: string; points: Point[] }[]> = {};
  for (const format of formats) {
    curves[format] = [];
    for (const photo of set) {
      const points: Point[] = [];
      for (const quality of [56, 60, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 88, 92]) {
        const { bytes, s2, dssim } = await convert(format, photo, quality);
        points.push({ quality, bytes, s2, dssim });
      }
      curves[format].push({ name: photo.name, points });
      console.log(format, photo.name, points.map((p) => `q${p.quality} ${p.bytes} ${p.s2.toFixed(2)} ${(p.dssim * 1e3).toFixed(3)}`).join(' | '));
    }
    analyseCurves(format, curves[format]);
  }
  writeFileSync(path.join(root, 'test-output/bench/quality-curves.json'), JSON.stringify(curves, null, 2));
  process.exit(0);
}
const curvesFrom = argument('curves-from');
if (curvesFrom) {
  for (const [format, curves] of Object.entries(JSON.parse(readFileSync(curvesFrom, 'utf8')) as Record<string, { name: string; points: Point[] }[]>)) analyseCurves(format, curves);
  process.exit(0);
}

const report: Record<string, object> = {};
const f = (n: number, digits = 2) => n.toFixed(digits);
for (const format of formats) {
  const rows: { photo: Photo; q80: Judged; auto: Judged }[] = [];
  for (const photo of set) {
    const row = { photo, q80: await convert(format, photo, 80), auto: await convert(format, photo, 'auto') };
    rows.push(row);
    console.log(
      `${format} ${photo.name.padEnd(20)} q80 ${String(row.q80.bytes).padStart(8)} B s2 ${f(row.q80.s2)} dssim ${f(row.q80.dssim * 1e3, 3)}e-3 | auto q${row.auto.quality} ${String(row.auto.bytes).padStart(8)} B s2 ${f(row.auto.s2)} (reported ${f(row.auto.reported!)}) dssim ${f(row.auto.dssim * 1e3, 3)}e-3 ${f(row.auto.ms, 0)} ms (q80 ${f(row.q80.ms, 0)} ms)`,
    );
  }
  const target = argument(`target-${format}`) ? Number(argument(`target-${format}`)) : AUTO_QUALITY[format].target;
  const summaries = [...sets.filter((name) => rows.some((r) => r.photo.set === name)).map((name) => [name, rows.filter((r) => r.photo.set === name)] as const), ['all', rows] as const];
  report[format] = { target, rows: rows.map(({ photo, q80, auto }) => ({ name: photo.name, q80, auto })), summaries: {} };
  for (const [name, list] of summaries) {
    const sum = (side: 'q80' | 'auto') => list.reduce((total, r) => total + r[side].bytes, 0);
    const worstDssim = (side: 'q80' | 'auto') => Math.max(...list.map((r) => r[side].dssim));
    const worstS2 = (side: 'q80' | 'auto') => Math.min(...list.map((r) => r[side].s2));
    const worstBa = (side: 'q80' | 'auto') => Math.max(...list.map((r) => r[side].butteraugli));
    const summary = {
      photos: list.length,
      bytesRatio: sum('auto') / sum('q80'),
      worstDssim: { q80: worstDssim('q80'), auto: worstDssim('auto') },
      worstSsimulacra2: { q80: worstS2('q80'), auto: worstS2('auto') },
      worstButteraugli: { q80: worstBa('q80'), auto: worstBa('auto') },
      missed: list.filter((r) => r.auto.s2 < target).length,
      largestReportError: Math.max(...list.map((r) => Math.abs(r.auto.s2 - r.auto.reported!))),
    };
    (report[format] as { summaries: Record<string, object> }).summaries[name] = summary;
    console.log(
      `${format} ${name}: target ${target}; bytes auto/q80 ${f(summary.bytesRatio, 3)}; worst DSSIM q80 ${f(summary.worstDssim.q80 * 1e3, 3)}e-3, auto ${f(summary.worstDssim.auto * 1e3, 3)}e-3 (${summary.worstDssim.auto <= summary.worstDssim.q80 ? 'no worse' : 'WORSE'}); worst SSIMULACRA 2 q80 ${f(summary.worstSsimulacra2.q80)}, auto ${f(summary.worstSsimulacra2.auto)}; butteraugli q80 ${f(summary.worstButteraugli.q80)}, auto ${f(summary.worstButteraugli.auto)}; ${summary.missed} missed the target; reported score within ${f(summary.largestReportError, 3)}; load ${f(loadavg()[0])}`,
    );
  }
}
writeFileSync(path.join(root, 'test-output/bench/quality-calibration.json'), JSON.stringify(report, null, 2));
