/// <reference types="node" />
/**
 * `npx node bench/png-codec.ts [runs] [--decode-only]`: the PNG codec of src/image/formats/png in
 * workerd (Miniflare) against sharp in this process (libspng/libpng + zlib-ng,
 * `sharp.concurrency(1)`) and wasm-vips (libvips in WebAssembly, `concurrency(1)`), on the 12 MP
 * and 1 MP corpus photos and a generated screenshot-like image:
 * - decode time of 12 MP PNGs written by sharp: its default (no filter), adaptive filters (the
 *   Avg and Paeth rows most PNG writers choose for photos) in RGB and RGBA, and Adam7;
 * - encode time and bytes per filter strategy and zlib level against sharp's default `png()`;
 * - workerd's RSS growth during each (the codec's WebAssembly memory is what
 *   src/image/formats/png/memory.ts budgets).
 * Times are medians of `runs` (default 5) after one warm-up; workerd's include the request, so
 * the median of an empty request with the same body and reply size is subtracted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import sharp from 'sharp';
import Vips from 'wasm-vips';
import { median } from './timing.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const PHOTOS = path.resolve(ROOT, '../shared/corpus/photos');
const RUNS = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 5);
const DECODE_ONLY = process.argv.includes('--decode-only');
const MB = 2 ** 20;
// The encoder's defaults (src/image/formats/png/encode.ts DEFAULT_PNG_ENCODE), whose RSS is measured.
const DEFAULT_FILTER = 'cheap-adaptive';
const DEFAULT_LEVEL = 1;

sharp.concurrency(1);
sharp.cache(false);

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; result: T }> {
  let result = await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    result = await run();
    times.push(performance.now() - start);
  }
  return { ms: median(times), result };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * workerd serving `script` on a free port, started directly (the binary Miniflare uses), with the
 * codec's WebAssembly modules beside it (the bundle imports them by file name, as wrangler's does).
 */
async function startWorkerd(script: string, wasmFiles: string[]): Promise<{ url: string; pid: number; stop: () => void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'png-codec-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'worker.js'), script);
  for (const file of wasmFiles) writeFileSync(path.join(dir, path.basename(file)), readFileSync(file));
  const wasmModules = wasmFiles.map((file) => `, (name = "${path.basename(file)}", wasm = embed "${path.basename(file)}")`).join('');
  writeFileSync(
    path.join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (modules = [(name = "worker.js", esModule = embed "worker.js")${wasmModules}], compatibilityDate = "2026-11-01");
`,
  );
  const child = spawn(path.join(ROOT, 'node_modules/.bin/workerd'), ['serve', path.join(dir, 'config.capnp')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${url}/null`, { method: 'POST' });
      break;
    } catch (error) {
      if (i > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { url, pid: child.pid!, stop: () => (child.kill(), rmSync(dir, { recursive: true, force: true })) };
}

function rssBytes(pid: number): number {
  return 1024 * Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** Peak RSS growth of `pid` while `run` runs, sampled every 2 ms. */
async function rssGrowth<T>(pid: number, run: () => Promise<T>): Promise<number> {
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 2);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssBytes(pid)) - before;
}

async function main(): Promise<void> {
  const wasmFiles = new Set<string>();
  const bundle = await build({
    entryPoints: [path.join(ROOT, 'bench/png-worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    external: ['node:*'],
    plugins: [
      {
        name: 'wasm-beside-the-worker',
        setup(build) {
          build.onResolve({ filter: /\.wasm$/ }, (args) => {
            const file = path.resolve(args.resolveDir, args.path);
            wasmFiles.add(file);
            return { path: path.basename(file), external: true };
          });
        },
      },
    ],
  });
  const workerd = await startWorkerd(bundle.outputFiles[0].text, [...wasmFiles]);
  const pid = workerd.pid;
  const call = async (route: string, body: Uint8Array) => {
    const response = await fetch(`${workerd.url}${route}`, { method: 'POST', body });
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return new Uint8Array(await response.arrayBuffer());
  };
  const inWorkerd = async (route: string, body: Uint8Array) => {
    const run = await timed(() => call(route, body));
    const empty = await timed(() => call(`/null?reply=${run.result.length}`, body));
    return { ms: run.ms - empty.ms, result: run.result };
  };

  const photo = async (file: string, channels: 3 | 4) => {
    const rgb = await sharp(path.join(PHOTOS, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const { width, height } = rgb.info;
    if (channels === 3) return { data: new Uint8Array(rgb.data), width, height, channels };
    // Alpha that varies like the picture (its green), so it costs what real alpha costs.
    const rgba = new Uint8Array(width * height * 4);
    for (let i = 0, o = 0; i < rgb.data.length; i += 3, o += 4) rgba.set([rgb.data[i], rgb.data[i + 1], rgb.data[i + 2], rgb.data[i + 1]], o);
    return { data: rgba, width, height, channels };
  };
  const toRgba = (image: { data: Uint8Array; width: number; height: number; channels: number }) => {
    if (image.channels === 4) return image.data;
    const out = new Uint8Array(image.width * image.height * 4);
    for (let i = 0, o = 0; o < out.length; i += 3, o += 4) out.set([image.data[i], image.data[i + 1], image.data[i + 2], 255], o);
    return out;
  };
  const sharpPng = (image: { data: Uint8Array; width: number; height: number; channels: 3 | 4 }, progressive = false, adaptiveFiltering = false) =>
    sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } }).png({ progressive, adaptiveFiltering }).toBuffer();
  const vips = await Vips();
  vips.concurrency(1);
  const wasmVipsDecode = async (png: Uint8Array) => {
    const image = vips.Image.newFromBuffer(png);
    image.writeToMemory();
    image.delete();
  };

  const photo12 = await photo('photo-12mp.jpg', 3);
  const photo12Alpha = await photo('photo-12mp.jpg', 4);
  const photo1 = await photo('photo-1mp.jpg', 3);
  const screenshot = screenshotLike(2560, 1440, photo12);

  console.log(`PNG codec in workerd vs sharp and wasm-vips, median of ${RUNS} runs (ms); workerd RSS growth in MiB; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log('\nDecode (PNGs written by sharp):');
  for (const [name, image, progressive, adaptive] of [
    ['12 MP RGB', photo12, false, false],
    ['12 MP RGB, adaptive filters', photo12, false, true],
    ['12 MP RGBA', photo12Alpha, false, false],
    ['12 MP RGBA, adaptive filters', photo12Alpha, false, true],
    ['12 MP RGB Adam7', photo12, true, false],
    ['screenshot 2560x1440', screenshot, false, false],
  ] as const) {
    const png = new Uint8Array(await sharpPng(image, progressive, adaptive));
    const ours = await inWorkerd('/decode', png);
    const theirs = await timed(() => sharp(png).raw().toBuffer());
    const wasmVips = await timed(() => wasmVipsDecode(png));
    const growth = await rssGrowth(pid, () => call('/decode', png));
    const base = await rssGrowth(pid, () => call('/null', png));
    const { wasmBytes } = JSON.parse(new TextDecoder().decode(ours.result));
    console.log(
      `  ${name}: ${(png.length / MB).toFixed(1)} MiB file; ours ${ours.ms.toFixed(0)}, sharp ${theirs.ms.toFixed(0)} (x${(ours.ms / theirs.ms).toFixed(2)}), ` +
        `wasm-vips ${wasmVips.ms.toFixed(0)} (x${(ours.ms / wasmVips.ms).toFixed(2)}); ` +
        `WebAssembly memory ${(wasmBytes / 1024).toFixed(0)} KiB; RSS growth ${(growth / MB).toFixed(1)} (same body, no decode: ${(base / MB).toFixed(1)})`,
    );
  }

  if (DECODE_ONLY) {
    workerd.stop();
    return;
  }
  console.log('\nEncode (bytes and time against sharp png(), compressionLevel 6, no filtering):');
  for (const [name, image] of [['12 MP photo', photo12], ['screenshot 2560x1440', screenshot], ['1 MP photo', photo1]] as const) {
    const theirs = await timed(() => sharpPng(image));
    const rgba = toRgba(image);
    const query = `width=${image.width}&height=${image.height}&alpha=0`;
    for (const setting of ['up:1', 'adaptive:1', 'adaptive:2', 'cheap-adaptive:1', 'none:6']) {
      const [filter, level] = setting.split(':');
      const isDefault = filter === DEFAULT_FILTER && Number(level) === DEFAULT_LEVEL;
      const ours = await inWorkerd(`/encode?${query}&filter=${filter}&level=${level}`, rgba);
      const decoded = await sharp(ours.result).raw().toBuffer();
      if (!decoded.equals(Buffer.from(image.data))) throw new Error(`${name} ${filter}: the PNG does not decode to its pixels`);
      const bytes = ours.result.length;
      const growth = isDefault ? await rssGrowth(pid, () => call(`/encode?${query}&filter=${filter}&level=${level}`, rgba)) : NaN;
      const base = isDefault ? await rssGrowth(pid, () => call(`/null?reply=${bytes}`, rgba)) : NaN;
      console.log(
        `  ${name} ${filter} level ${level}: ours ${(bytes / MB).toFixed(2)} MiB in ${ours.ms.toFixed(0)}; sharp ${(theirs.result.length / MB).toFixed(2)} MiB in ${theirs.ms.toFixed(0)}; ` +
          `bytes ours/sharp ${(bytes / theirs.result.length).toFixed(3)}, sharp/ours ${(theirs.result.length / bytes).toFixed(3)}; time x${(ours.ms / theirs.ms).toFixed(2)}` +
          (isDefault ? `; RSS growth ${(growth / MB).toFixed(1)} (same body and reply, no encode: ${(base / MB).toFixed(1)})` : ''),
      );
    }
  }

  workerd.stop();
}

/**
 * A screenshot-like RGB picture: flat panels, pseudo-text (runs of dark strokes on light
 * backgrounds), thin rules, a gradient toolbar, and a photo inset, as desktop screenshots have.
 */
function screenshotLike(width: number, height: number, photo: { data: Uint8Array; width: number }): { data: Uint8Array; width: number; height: number; channels: 3 } {
  const data = new Uint8Array(width * height * 3);
  let seed = 12345;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const fill = (x0: number, y0: number, w: number, h: number, rgb: number[]) => {
    for (let y = y0; y < Math.min(height, y0 + h); y++) for (let x = x0; x < Math.min(width, x0 + w); x++) data.set(rgb, (y * width + x) * 3);
  };
  fill(0, 0, width, height, [246, 246, 248]);
  for (let x = 0; x < width; x++) fill(x, 0, 1, 48, [40 + (x * 40) / width, 60, 90 + (x * 60) / width]);
  fill(0, 48, 280, height - 48, [232, 234, 238]);
  for (let y = 70; y < height - 20; y += 28) {
    fill(20, y, 24, 16, [random() * 255, random() * 255, random() * 255].map(Math.floor));
    for (let x = 54; x < 250 - 8; x += 7) if (random() < 0.8) fill(x, y + 4, 5, 9, [60, 60, 70]);
  }
  for (let y = 80; y < height - 400; y += 22) {
    if (random() < 0.1) continue;
    fill(300, y + 19, width - 340, 1, [225, 225, 230]);
    let x = 320;
    while (x < width - 60) {
      const word = 3 + Math.floor(random() * 8);
      for (let i = 0; i < word && x < width - 60; i++, x += 8) fill(x, y + 3 + (random() < 0.3 ? 0 : 3), 6, random() < 0.3 ? 12 : 9, [30, 30, 35]);
      x += 8;
    }
  }
  const [insetX, insetY, insetW, insetH] = [320, height - 380, 900, 360];
  for (let y = 0; y < insetH; y++) data.set(photo.data.subarray(((1000 + y) * photo.width + 1500) * 3, ((1000 + y) * photo.width + 1500 + insetW) * 3), ((insetY + y) * width + insetX) * 3);
  fill(1300, height - 380, 400, 40, [0, 120, 215]);
  fill(1300, height - 320, 400, 40, [220, 53, 69]);
  return { data, width, height, channels: 3 };
}

await main();
