/**
 * Calibration of quality=auto (issue 39; docs/decisions.md "quality=auto"): the repository's photos
 * at 1-3 MP (the nine pictures of the 24 MP mosaic, each resized to 1.5 MP, and the 1 MP photo and
 * the fox, resized to 1.2 MP; the 12 MP mosaic holds four of the 24 MP one's pictures), each encoded by the service's own
 * encoders at q80 and with quality=auto (src/image/quality: sample, search, whole-picture score,
 * at most one correction), and judged by SSIMULACRA 2 (the service's metric) and by DSSIM
 * (test/support/dssim.ts, the independent one). Per format: the target (the lowest q80 score: the
 * low end of what q80 delivers), each picture's quality, score, bytes and DSSIM, the total bytes
 * against q80's and the worst DSSIM of each.
 *
 *   npx node --experimental-transform-types --import ./bench/node-hooks.ts bench/quality-calibration.ts [--formats jpeg,webp,avif] [--target-jpeg 70] [--butteraugli <binary>]
 *
 * --butteraugli also judges every result by a butteraugli command you built yourself (google/butteraugli's
 * `butteraugli original.png distorted.png`, which prints the max-norm distance): the metric the
 * issue's own figures were judged by. Nothing here builds or ships it.
 *
 * Writes the table to stdout and everything to test-output/bench/quality-calibration.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { dssim } from '../test/support/dssim.ts';

const load = (file: string) => import(new URL(file, import.meta.url).href);
const { FORMATS } = await load('../src/image/formats/index.ts');
const { encodeToBytes } = await load('../src/image/result-buffer.ts');
const { pictureRows } = await load('../src/image/stages/rows.ts');
const { scoreRows } = await load('../src/image/quality/score-rows.ts');
const { sampleLayout, collectSample } = await load('../src/image/quality/sample.ts');
const { sampleTrial } = await load('../src/image/quality/sample-trial.ts');
const { autoQuality } = await load('../src/image/quality/auto-quality.ts');
const { AUTO_QUALITY } = await load('../src/image/quality/calibration.ts');

type Format = 'jpeg' | 'webp' | 'avif';
interface Picture {
  name: string;
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
const butteraugliBinary = argument('butteraugli');
/**
 * --choose-by dssim: an experiment, quality=auto steered by DSSIM instead of SSIMULACRA 2 (as
 * 100 - 10^4 DSSIM, on the same scale of points), to compare the metrics as the service's choice.
 */
const chooseBy = argument('choose-by') ?? 'ssimulacra2';
const DSSIM_POINTS = 1e4;
const scratch = mkdtempSync(path.join(tmpdir(), 'quality-calibration-'));

/** The butteraugli distance by the command given (NaN without one). */
async function butteraugli(original: Picture, distortedPicture: Picture): Promise<number> {
  if (!butteraugliBinary) return NaN;
  const files = [path.join(scratch, 'a.png'), path.join(scratch, 'b.png')];
  for (const [i, picture] of [original, distortedPicture].entries()) {
    await sharp(Buffer.from(picture.data), { raw: { width: picture.width, height: picture.height, channels: 4 } }).removeAlpha().png().toFile(files[i]);
  }
  return Number(execFileSync(butteraugliBinary, files, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split(/\s+/)[0]);
}

/** The photos at 1-3 MP: mosaic cells and whole photos, resized by sharp (Lanczos-3), opaque RGBA. */
async function pictures(): Promise<Picture[]> {
  const out: Picture[] = [];
  const add = async (name: string, image: Sharp, width: number) => {
    const { data, info } = await image.resize(width).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    out.push({ name, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height });
  };
  for (const [file, columns, rows] of [['photo-24mp.jpg', 3, 3]] as const) {
    const source = path.join(corpus, 'photos', file);
    const { width, height } = await sharp(source).metadata();
    const cell = { width: Math.floor(width! / columns), height: Math.floor(height! / rows) };
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        const region = { left: c * cell.width, top: r * cell.height, ...cell };
        await add(`${file.replace('.jpg', '')} ${r * columns + c + 1}`, sharp(source).extract(region), 1500);
      }
    }
  }
  await add('photo-1mp', sharp(path.join(corpus, 'photos/photo-1mp.jpg')), 1340);
  await add('fox', sharp(path.join(corpus, 'avif/fox.jpg')), 1340);
  return out;
}

const traits = { model: 'rgba' as const, alpha: false, grey: false };
const rows = (picture: Picture) => pictureRows({ ...picture, data: picture.data.slice() }, traits);

async function encode(format: Format, picture: Picture, quality: number): Promise<Uint8Array> {
  return encodeToBytes(FORMATS[format].encoder, rows(picture), { quality, orientation: 1 });
}

async function decode(format: Format, bytes: Uint8Array): Promise<Picture> {
  const source = await FORMATS[format].read(bytes).decode({ shrink: 1, region: null });
  const data = new Uint8Array(source.width * source.height * 4);
  for (let band = await source.read(); band; band = await source.read()) data.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
  source.close();
  return { name: '', data, width: source.width, height: source.height };
}

async function ssimulacra2(format: Format, picture: Picture, bytes: Uint8Array): Promise<number> {
  return scoreRows(rows(picture), await FORMATS[format].read(bytes).decode({ shrink: 1, region: null }));
}

/** The score quality=auto is steered by. */
async function score(format: Format, picture: Picture, bytes: Uint8Array): Promise<number> {
  if (chooseBy === 'dssim') return 100 - DSSIM_POINTS * dssim(picture, await decode(format, bytes));
  return ssimulacra2(format, picture, bytes);
}

interface Row {
  name: string;
  q80: { bytes: number; score: number; s2: number; dssim: number; butteraugli: number };
  auto: { quality: number; bytes: number; score: number; s2: number; dssim: number; butteraugli: number; encodes: number; sampleTrials: number; ms: number };
}

/**
 * --curves: each picture's whole-picture curve instead (SSIMULACRA 2, DSSIM, butteraugli and bytes
 * at q62-92 in steps of 6, interpolated between), written to test-output/bench/quality-curves.json,
 * and from them analyseCurves' table: each metric as the chooser against each as the judge.
 * --curves-from <json> prints the table from curves written before.
 */
const curvesFrom = argument('curves-from');
if (curvesFrom) {
  const saved = JSON.parse(readFileSync(curvesFrom, 'utf8')) as Record<string, { name: string; points: Point[] }[]>;
  for (const [format, curves] of Object.entries(saved)) analyseCurves(format, curves);
  process.exit(0);
}
if (process.argv.includes('--curves')) {
  const qualities = [62, 68, 74, 80, 86, 92];
  const set = await pictures();
  const curves: Record<string, { name: string; points: { quality: number; bytes: number; s2: number; dssim: number; butteraugli: number }[] }[]> = {};
  for (const format of formats) {
    curves[format] = [];
    for (const picture of set) {
      const points = [];
      for (const quality of qualities) {
        const bytes = await encode(format, picture, quality);
        const decoded = await decode(format, bytes);
        points.push({ quality, bytes: bytes.byteLength, s2: await ssimulacra2(format, picture, bytes), dssim: dssim(picture, decoded), butteraugli: await butteraugli(picture, decoded) });
      }
      curves[format].push({ name: picture.name, points });
      console.log(format, picture.name, points.map((p) => `q${p.quality} ${p.bytes} ${p.s2.toFixed(2)} ${(p.dssim * 1e3).toFixed(3)} ${p.butteraugli.toFixed(2)}`).join(' | '));
    }
    analyseCurves(format, curves[format]);
  }
  mkdirSync(path.join(root, 'test-output/bench'), { recursive: true });
  writeFileSync(path.join(root, 'test-output/bench/quality-curves.json'), JSON.stringify(curves, null, 2));
  process.exit(0);
}


type Point = { quality: number; bytes: number; s2: number; dssim: number; butteraugli: number };
type Judge = 's2' | 'dssim' | 'butteraugli';

/** A curve's value at an integer quality between its points: linear, bytes geometric. */
function at(points: Point[], quality: number): Point {
  const upper = points.findIndex((p) => p.quality >= quality);
  if (upper <= 0) return points[Math.max(0, upper)];
  const [a, b] = [points[upper - 1], points[upper]];
  const t = (quality - a.quality) / (b.quality - a.quality);
  const mix = (key: Judge) => a[key] + (b[key] - a[key]) * t;
  return { quality, bytes: Math.exp(Math.log(a.bytes) * (1 - t) + Math.log(b.bytes) * t), s2: mix('s2'), dssim: mix('dssim'), butteraugli: mix('butteraugli') };
}

/**
 * For each metric as the one choosing (each picture at the lowest quality whose score meets a
 * target) and each other as the judge: the fewest bytes against q80 of a target whose choice keeps
 * the judge's worst picture no worse than at q80 (the issue's "Done when"), or none.
 */
function analyseCurves(format: string, curves: { name: string; points: Point[] }[]): void {
  const qualities = Array.from({ length: 31 }, (_, i) => 62 + i);
  const tables = curves.map((c) => qualities.map((q) => at(c.points, q)));
  const q80 = tables.map((table) => table[80 - 62]);
  const worse = (judge: Judge, a: number, b: number) => (judge === 's2' ? a < b - 1e-9 : a > b + 1e-9);
  const worstOf = (judge: Judge, points: Point[]) => (judge === 's2' ? Math.min(...points.map((p) => p.s2)) : Math.max(...points.map((p) => p[judge])));
  const q80Bytes = q80.reduce((sum, p) => sum + p.bytes, 0);
  const meets = (chooser: Judge, point: Point, target: number) => (chooser === 's2' ? point.s2 >= target : point[chooser] <= target);
  const targets: Record<Judge, number[]> = {
    s2: Array.from({ length: 500 }, (_, i) => 40 + i / 10),
    dssim: Array.from({ length: 80 }, (_, i) => (0.5 + i / 10) / 1e3),
    butteraugli: Array.from({ length: 70 }, (_, i) => 1.5 + i / 10),
  };
  for (const chooser of ['s2', 'dssim', 'butteraugli'] as const) {
    for (const judge of ['s2', 'dssim', 'butteraugli'] as const) {
      let best: { bytes: number; target: number } | null = null;
      for (const target of targets[chooser]) {
        const chosen = tables.map((table) => table.find((p) => meets(chooser, p, target)) ?? table.at(-1)!);
        if (worse(judge, worstOf(judge, chosen), worstOf(judge, q80))) continue;
        const bytes = chosen.reduce((sum, p) => sum + p.bytes, 0) / q80Bytes;
        if (!best || bytes < best.bytes) best = { bytes, target };
      }
      console.log(`${format}: chosen by ${chooser}, judged by ${judge}: ${best ? `${best.bytes.toFixed(3)} of q80's bytes at target ${best.target.toPrecision(4)}` : 'no target'}`);
    }
  }
}

const report: Record<string, object> = {};
const set = await pictures();
console.log(`${set.length} pictures, ${set.map((p) => `${p.width}x${p.height}`).join(', ')}; load ${loadavg()[0].toFixed(2)}`);
for (const format of formats) {
  const q80: Row['q80'][] = [];
  for (const picture of set) {
    const bytes = await encode(format, picture, 80);
    const decoded = await decode(format, bytes);
    const s2 = await ssimulacra2(format, picture, bytes);
    const d = dssim(picture, decoded);
    q80.push({ bytes: bytes.byteLength, score: chooseBy === 'dssim' ? 100 - DSSIM_POINTS * d : s2, s2, dssim: d, butteraugli: await butteraugli(picture, decoded) });
  }
  const lowest = Math.min(...q80.map((r) => r.score));
  const given = argument(`target-${format}`);
  const target = given ? Number(given) : lowest;
  const settings = AUTO_QUALITY[format];
  const results: Row[] = [];
  for (const [i, picture] of set.entries()) {
    const started = performance.now();
    const mosaic = await collectSample(rows(picture), sampleLayout(picture.width, picture.height));
    const trial = sampleTrial(format, mosaic, { alpha: false }, picture.width * picture.height);
    const chosen = await autoQuality(
      {
        sampleScore: async (quality: number) => {
          if (chooseBy !== 'dssim') return (await trial(quality)).score;
          return 100 - DSSIM_POINTS * dssim(mosaic, await decode(format, await encode(format, { name: '', ...mosaic }, quality)));
        },
        encode: (quality: number) => encode(format, picture, quality),
        score: (bytes: Uint8Array) => score(format, picture, bytes),
      },
      { target, sampleMargin: settings.sampleMargin, overshoot: settings.overshoot },
    );
    const ms = performance.now() - started;
    const bytes: Uint8Array = chosen.result;
    const decoded = await decode(format, bytes);
    const row: Row = {
      name: picture.name,
      q80: q80[i],
      auto: {
        quality: chosen.quality,
        bytes: bytes.byteLength,
        score: chosen.score,
        s2: chooseBy === 'dssim' ? await ssimulacra2(format, picture, bytes) : chosen.score,
        dssim: dssim(picture, decoded),
        butteraugli: await butteraugli(picture, decoded),
        encodes: chosen.encodes,
        sampleTrials: chosen.sampleTrials,
        ms,
      },
    };
    results.push(row);
    const f = (n: number, d = 2) => n.toFixed(d);
    console.log(
      `${format} ${row.name.padEnd(16)} q80 ${String(row.q80.bytes).padStart(8)} B s2 ${f(row.q80.s2)} dssim ${f(row.q80.dssim * 1e3, 3)}e-3 ba ${f(row.q80.butteraugli)} | auto q${row.auto.quality} ${String(row.auto.bytes).padStart(8)} B s2 ${f(row.auto.s2)} dssim ${f(row.auto.dssim * 1e3, 3)}e-3 ba ${f(row.auto.butteraugli)} encodes ${row.auto.encodes} trials ${row.auto.sampleTrials} ${f(ms, 0)} ms`,
    );
  }
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const bytesRatio = sum(results.map((r) => r.auto.bytes)) / sum(results.map((r) => r.q80.bytes));
  const worstDssimQ80 = Math.max(...results.map((r) => r.q80.dssim));
  const worstDssimAuto = Math.max(...results.map((r) => r.auto.dssim));
  const worstButteraugliQ80 = Math.max(...results.map((r) => r.q80.butteraugli));
  const worstButteraugliAuto = Math.max(...results.map((r) => r.auto.butteraugli));
  report[format] = { target, rows: results, bytesRatio, worstDssimQ80, worstDssimAuto, worstButteraugliQ80, worstButteraugliAuto };
  console.log(
    `${format}: chosen by ${chooseBy}, target ${target.toFixed(2)} (lowest q80 score ${lowest.toFixed(2)}); bytes auto/q80 ${bytesRatio.toFixed(3)}; worst DSSIM q80 ${(worstDssimQ80 * 1e3).toFixed(3)}e-3, auto ${(worstDssimAuto * 1e3).toFixed(3)}e-3 (${worstDssimAuto <= worstDssimQ80 ? 'no worse' : 'WORSE'}); worst SSIMULACRA 2 q80 ${Math.min(...results.map((r) => r.q80.s2)).toFixed(2)}, auto ${Math.min(...results.map((r) => r.auto.s2)).toFixed(2)}; worst butteraugli q80 ${worstButteraugliQ80.toFixed(3)}, auto ${worstButteraugliAuto.toFixed(3)}; load ${loadavg()[0].toFixed(2)}`,
  );
}
mkdirSync(path.join(root, 'test-output/bench'), { recursive: true });
writeFileSync(path.join(root, 'test-output/bench/quality-calibration.json'), JSON.stringify(report, null, 2));
