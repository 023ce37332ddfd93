/**
 * The libjpeg-turbo band codec (src/image/formats/jpeg/decode.ts and encode.ts) in Node 24 against sharp in the same
 * process: decode at 1/1..1/8, a 2000x2000 crop, a progressive decode, encodes with and without
 * optimised Huffman tables (bytes and SSIM against the source), the WebAssembly memory of each,
 * instance creation, and the module's size. Medians of --runs (default 5) runs, wall and CPU time;
 * sharp runs with one thread (sharp.concurrency(1)), as the wasm codec does.
 *
 *   npx node --experimental-transform-types --import ./bench/node-hooks.ts bench/jpeg-codec.ts [--runs 5]
 *
 * Writes the table to stdout and everything to test-output/bench/jpeg-codec.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { ssim } from '../test/support/ssim.ts';
import { type Timing, cpuNow, median } from './timing.ts';

// The Worker's modules, loaded through bench/node-hooks.ts. Imported by URL, so this script's type
// check (bench/tsconfig.json, Node types only) does not take in the Worker's WebAssembly types.
const load = (file: string) => import(new URL(file, import.meta.url).href);
const { openJpegDecode } = await load('../src/image/formats/jpeg/decode.ts');
const { encodeJpeg } = await load('../src/image/formats/jpeg/encode.ts');
const { readJpegHeader } = await load('../src/image/formats/jpeg/header.ts');
const { openEmscripten } = await load('../src/image/codecs/codec.ts');
const { collectFrame, frameSource } = await load('../test/support/row-sources.ts');
const { default: libjpegFactory } = await load('../src/image/codecs/wasm/libjpeg.js');
const { default: libjpegWasm } = await load('../src/image/codecs/wasm/libjpeg.wasm');

const root = path.resolve(import.meta.dirname, '..');
const runsAt = process.argv.indexOf('--runs');
const RUNS = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 5;
sharp.concurrency(1);

async function timed<T>(run: () => Promise<T>): Promise<{ timing: Timing; result: T }> {
  const wall = performance.now();
  const cpu = cpuNow();
  const result = await run();
  return { timing: { wallMs: performance.now() - wall, cpuMs: cpuNow() - cpu }, result };
}

/** Runs `run` RUNS times (after one warm-up) and returns the median wall and CPU times and the last result. */
async function measure<T>(run: () => Promise<T>): Promise<{ wallMs: number; cpuMs: number; result: T }> {
  let { result } = await timed(run);
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const measured = await timed(run);
    walls.push(measured.timing.wallMs);
    cpus.push(measured.timing.cpuMs);
    result = measured.result;
  }
  return { wallMs: median(walls), cpuMs: median(cpus), result };
}

/** Decodes every band of a window or scale; returns the WebAssembly memory at the end. */
async function decodeAll(bytes: Uint8Array, shrink: number, region: { x: number; y: number; width: number; height: number } | null = null): Promise<number> {
  const source = await openJpegDecode(bytes, readJpegHeader(bytes).frame, { shrink, region });
  let wasm = 0;
  for (;;) {
    wasm = source.wasmBytes();
    if (!(await source.read())) break;
  }
  return wasm;
}

const rows: Record<string, string | number>[] = [];
const MiB = 1024 * 1024;
const ms = (value: number) => (value < 10 ? Number(value.toFixed(2)) : Math.round(value));
const mib = (bytes: number) => Number((bytes / MiB).toFixed(2));

function record(what: string, ours: { wallMs: number; cpuMs: number }, extra: Record<string, string | number> = {}, sharpTiming?: { wallMs: number; cpuMs: number }) {
  const row = { what, wall_ms: ms(ours.wallMs), cpu_ms: ms(ours.cpuMs), ...(sharpTiming ? { sharp_wall_ms: ms(sharpTiming.wallMs), sharp_cpu_ms: ms(sharpTiming.cpuMs) } : {}), ...extra };
  rows.push(row);
  console.error(JSON.stringify(row));
}

const corpusFile = (name: string) => new Uint8Array(readFileSync(path.join(root, '../shared/corpus', name)));

// Instance creation: a fresh instance of the module, as every job makes.
record('instance creation', await measure(async () => (await openEmscripten(libjpegFactory, libjpegWasm)).release()));

for (const [name, file] of [['12 MP', 'photos/photo-12mp.jpg'], ['24 MP', 'photos/photo-24mp.jpg']] as const) {
  const bytes = corpusFile(file);
  const width = name === '12 MP' ? 4000 : 6000;
  for (const shrink of [1, 2, 4, 8]) {
    const ours = await measure(() => decodeAll(bytes, shrink));
    const reference = shrink === 1 ? await measure(() => sharp(bytes).raw().toBuffer()) : await measure(() => sharp(bytes).resize(width / shrink).raw().toBuffer());
    record(`decode ${name} 1/${shrink}${shrink > 1 ? ' (sharp: resize, shrink-on-load)' : ''}`, ours, { wasm_mib: mib(ours.result) }, reference);
  }
}

const photo12 = corpusFile('photos/photo-12mp.jpg');
const crop = { x: 1000, y: 1000, width: 2000, height: 2000 };
const cropped = await measure(() => decodeAll(photo12, 1, crop));
record('crop 2000x2000 of 12 MP', cropped, { wasm_mib: mib(cropped.result) }, await measure(() => sharp(photo12).extract({ left: 1000, top: 1000, width: 2000, height: 2000 }).raw().toBuffer()));

const progressive = new Uint8Array(await sharp(photo12).jpeg({ quality: 90, progressive: true }).toBuffer());
for (const shrink of [1, 8]) {
  const ours = await measure(() => decodeAll(progressive, shrink));
  const reference = shrink === 1 ? await measure(() => sharp(progressive).raw().toBuffer()) : await measure(() => sharp(progressive).resize(500).raw().toBuffer());
  record(`decode progressive 12 MP 1/${shrink}`, ours, { wasm_mib: mib(ours.result) }, reference);
}

const image = await collectFrame(await openJpegDecode(photo12, readJpegHeader(photo12).frame, { shrink: 1, region: null }));
const raw = { data: image.data, width: image.width, height: image.height, channels: 4 };
const decodedSsim = async (jpeg: Uint8Array) => {
  const back = await collectFrame(await openJpegDecode(jpeg, readJpegHeader(jpeg).frame, { shrink: 1, region: null }));
  return Number(ssim(raw, { data: back.data, width: back.width, height: back.height, channels: 4 }).toFixed(5));
};
for (const quality of [80, 95]) {
  const reference = await measure(async () => new Uint8Array(await sharp(image.data, { raw: { width: 4000, height: 3000, channels: 4 } }).removeAlpha().jpeg({ quality }).toBuffer()));
  const sharpBytes = reference.result.length;
  for (const optimizeHuffman of [true, false]) {
    const stats = { libjpegPeakBytes: 0, wasmBytes: 0 };
    const ours = await measure((): Promise<Uint8Array> => encodeJpeg(frameSource(image, { alpha: false }), { quality, optimizeHuffman }, stats));
    record(
      `encode 12 MP q${quality} ${optimizeHuffman ? 'optimised' : 'standard'} tables`,
      ours,
      { wasm_mib: mib(stats.wasmBytes), bytes: ours.result.length, sharp_bytes: sharpBytes, bytes_vs_sharp: `${((ours.result.length / sharpBytes - 1) * 100).toFixed(1)}%`, ssim: await decodedSsim(ours.result), sharp_ssim: await decodedSsim(reference.result) },
      reference,
    );
  }
}

const wasmFile = readFileSync(path.join(root, 'src/image/codecs/wasm/libjpeg.wasm'));
const glueFile = readFileSync(path.join(root, 'src/image/codecs/wasm/libjpeg.js'));
const sizes = { wasm_bytes: wasmFile.length, wasm_gzip: gzipSync(wasmFile, { level: 9 }).length, glue_bytes: glueFile.length, glue_gzip: gzipSync(glueFile, { level: 9 }).length };

console.table(rows);
console.log('module size:', sizes);
mkdirSync(path.join(root, 'test-output/bench'), { recursive: true });
writeFileSync(path.join(root, 'test-output/bench/jpeg-codec.json'), JSON.stringify({ runs: RUNS, node: process.version, rows, sizes }, null, 2));
