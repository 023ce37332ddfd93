/// <reference types="node" />
/**
 * `npm run bench`: the API through `wrangler dev` against sharp/libvips in this process.
 * See bench/README.md for what is measured and how; `npm run bench -- --help` for options.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { PROJECT_ROOT } from '../src/cli/d1.ts';
import { startDevServer, type DevServer } from '../test/node/dev-server.ts';
import { ApiClient, createProUser, DEMO_PRO_KEY, multipartBody, type MultipartBody } from './api.ts';
import { largeInput } from '../test/support/large-inputs.ts';
import { matrixCases, runMatrixCase, type MatrixResult } from './matrix.ts';
import { measureBundle, type BundleResult } from './bundle.ts';
import { runLoad, type LoadResult } from './load.ts';
import { cpuMs, cpuTimes, findWorkerd, foreignProcesses, sampleDuring, stealPercent, type ProcessMemory } from './memory.ts';
import { printReport } from './report.ts';
import { loadTable, runLoadMix } from './load-mix.ts';
import { runRtt, rttTable, writeMarkedTable } from './rtt.ts';
import { runVersusService, versusTable } from './versus-service.ts';
import { autoTable, runQualityAuto, type AutoTimes } from './quality-auto.ts';
import { psnr, PSNR_DESCRIPTION, ssim, SSIM_DESCRIPTION, type RawImage } from '../test/support/ssim.ts';
import { decodeRgb, memoryFields, PHOTO, PHOTOS_DIR, TIMED_WORKLOADS, W6, type Megapixels, type TimedWorkload } from './workloads.ts';

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

const ALL_WORKLOADS = ['W1', 'W2', 'W3', 'W4', 'W5', 'W6', 'W7', 'W8', 'W9', 'W10', 'W11'] as const;
type WorkloadId = (typeof ALL_WORKLOADS)[number];

export interface BenchOptions {
  runs: number;
  warmup: number;
  only: Set<WorkloadId>;
  skipMemory: boolean;
  skipLoad: boolean;
  skipBundle: boolean;
  /** quality=auto against q80 on the 12 MP photo (bench/quality-auto.ts). */
  skipAuto: boolean;
  skipTimed: boolean;
  /** The full-size matrix (bench/matrix.ts) on a server with the default configuration. */
  skipMatrix: boolean;
  /** Only matrix inputs whose name contains one of these (all by default). */
  matrixInputs: string[];
  memorySizes: Megapixels[];
  loadSeconds: number;
  loadConnections: number;
  /** 'auto': probe the rate, then make enough users that nobody passes 10 requests per second. */
  loadUsers: 'auto' | number;
  out: string;
  saveOutputs: boolean;
  verbose: boolean;
  /** "far/near": only the round-trip table (bench/rtt.ts), written into docs/performance.md. */
  rtt: string | null;
  /** Only the mixed load against the API and a sharp service (bench/load-mix.ts), into docs/performance.md. */
  loadMix: boolean;
  /** Only W9 against sharp and W6 against the sharp service (bench/versus-service.ts), into docs/performance.md. */
  versusService: boolean;
}

const USAGE = `Usage: npm run bench [-- <options>]

Runs the API through wrangler dev (a Pro key) and the same work with sharp in this process,
then prints the tables and writes them as JSON.

  --runs <n>             timed runs per workload and side, after the warm-up (default 5)
  --warmup <n>           untimed warm-up runs per workload and side (default 1)
  --only <W1,W2,...>     workloads to run (W1-W5 timed and memory, W6-W7 load); default all
  --skip-memory          no fresh-server memory measurements
  --skip-load            no load tests (W6, W7)
  --skip-bundle          no wrangler deploy --dry-run bundle size
  --skip-auto            no quality=auto against q80 on the 12 MP photo (time bounds, memory)
  --skip-timed           no timed runs of W1-W5 against sharp (memory and load only)
  --skip-matrix          no full-size matrix (every full-size input through every operation
                         with the default configuration: outcome, memory held and predicted, time)
  --matrix-inputs <a,b>  only matrix inputs whose name contains one of these (e.g. 24mp,png)
  --memory-sizes <12,24> photo sizes for the memory measurements (default 12,24)
  --load-seconds <s>     duration of each load test (default 10)
  --connections <n>      concurrent connections in the load tests (default 4)
  --load-users <n|auto>  Pro users (keys) the load is spread over, the demo one included;
                         auto probes the rate and makes enough (default auto, at most 40)
  --out <file>           JSON output (default test-output/bench/latest.json)
  --save-outputs         keep each workload's API and sharp output files in outputs/ beside the JSON
  --load                 only this: 12 clients send a mix of real work for --load-seconds
                         (60 by default here) to the API through npm run dev and to a sharp
                         service on Node; the table goes into docs/performance.md
  --versus-service       only this: W9 (12 MP PNG -> JPEG) against sharp in this process and W6
                         (1 MP -> 400 px WebP) against the sharp service, alternating, --runs
                         each (7 or more advised); the table goes into docs/performance.md
  --rtt <far>/<near>     only this: the API's requests timed at 0/0 and with every D1 and R2
                         call <far> ms and every Durable Object call <near> ms away (e.g.
                         100/5); the table goes into docs/performance.md
  --verbose              echo the dev servers' output
  -h, --help             this text`;

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const options: BenchOptions = {
    runs: 5,
    warmup: 1,
    only: new Set(ALL_WORKLOADS),
    skipMemory: false,
    skipLoad: false,
    skipBundle: false,
    skipAuto: false,
    skipTimed: false,
    skipMatrix: false,
    matrixInputs: [],
    memorySizes: [12, 24],
    loadSeconds: 10,
    loadConnections: 4,
    loadUsers: 'auto',
    out: path.join(PROJECT_ROOT, 'test-output', 'bench', 'latest.json'),
    saveOutputs: false,
    verbose: false,
    rtt: null,
    loadMix: false,
    versusService: false,
  };
  const positiveInt = (name: string, value: string | undefined, min = 1) => {
    if (value === undefined || !/^\d+$/.test(value) || Number(value) < min) throw new Error(`--${name} needs a whole number >= ${min}`);
    return Number(value);
  };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(argv[i]);
    if (argv[i] === '--') continue;
    if (argv[i] === '-h' || m?.[1] === 'help') return 'help';
    if (!m) throw new Error(`unexpected argument ${JSON.stringify(argv[i])}`);
    const name = m[1];
    const value = () => m[2] ?? argv[++i];
    switch (name) {
      case 'runs':
        options.runs = positiveInt(name, value());
        break;
      case 'warmup':
        options.warmup = positiveInt(name, value(), 0);
        break;
      case 'only': {
        const ids = (value() ?? '').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
        const bad = ids.filter((id) => !(ALL_WORKLOADS as readonly string[]).includes(id));
        if (!ids.length || bad.length) throw new Error(`--only takes workloads from ${ALL_WORKLOADS.join(',')}; got ${bad.join(',') || 'nothing'}`);
        options.only = new Set(ids as WorkloadId[]);
        break;
      }
      case 'skip-memory':
        options.skipMemory = true;
        break;
      case 'skip-load':
        options.skipLoad = true;
        break;
      case 'skip-bundle':
        options.skipBundle = true;
        break;
      case 'skip-auto':
        options.skipAuto = true;
        break;
      case 'skip-timed':
        options.skipTimed = true;
        break;
      case 'skip-matrix':
        options.skipMatrix = true;
        break;
      case 'matrix-inputs':
        options.matrixInputs = (value() ?? '').split(',').map((part) => part.trim()).filter(Boolean);
        break;
      case 'memory-sizes': {
        const sizes = (value() ?? '').split(',').map((s) => Number(s.trim()));
        if (!sizes.length || sizes.some((s) => s !== 12 && s !== 24)) throw new Error('--memory-sizes takes 12 and/or 24');
        options.memorySizes = sizes as Megapixels[];
        break;
      }
      case 'load-seconds':
        options.loadSeconds = positiveInt(name, value());
        break;
      case 'connections':
        options.loadConnections = positiveInt(name, value());
        break;
      case 'load-users': {
        const v = value();
        options.loadUsers = v === 'auto' ? 'auto' : positiveInt(name, v);
        break;
      }
      case 'out':
        options.out = path.resolve(value() ?? '');
        break;
      case 'save-outputs':
        options.saveOutputs = true;
        break;
      case 'verbose':
        options.verbose = true;
        break;
      case 'load':
        options.loadMix = true;
        break;
      case 'versus-service':
        options.versusService = true;
        break;
      case 'rtt': {
        const v = value() ?? '';
        if (!/^\d{1,5}\/\d{1,5}$/.test(v)) throw new Error(`--rtt takes <far ms>/<near ms>, such as 100/5; got ${v}`);
        options.rtt = v;
        break;
      }
      default:
        throw new Error(`unknown option --${name}`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

export interface SideResult {
  label: string;
  runsMs: number[];
  medianMs: number;
  bytes: number;
  width: number;
  height: number;
  ssim: number;
  psnr: number;
  /** CPU time stolen by the hypervisor during this side's runs, in % (a sign of a noisy machine). */
  stealPercent: number | null;
  /**
   * sharp's side: the process's CPU time per run, median. libvips writes JPEG and PNG files on a
   * thread of its own beside the pipeline even at concurrency(1), so this can exceed the wall time.
   */
  medianCpuMs?: number;
}

export interface ApiSideResult extends SideResult {
  endpoint: string;
  fields: Record<string, string>;
  /** CPU time of the user-Worker workerd during each timed call (all its threads). */
  workerCpuMs: number[];
  medianWorkerCpuMs: number;
  /** Median ms of each request step and pipeline stage (Server-Timing). */
  stepsMs: Record<string, number>;
}

export interface Check {
  what: string;
  pass: boolean;
}

export interface TimedResult {
  id: string;
  title: string;
  api: ApiSideResult;
  sharp: SideResult;
  ratio: number;
  /** sharp at the lowest quality whose SSIM reaches the API's (workloads with sharpAtQuality). */
  equalSsim: { quality: number; sharp: SideResult; ratio: number } | null;
  target: { text: string; pass: boolean; checks: Check[] };
}

export interface MemoryResult {
  id: string;
  megapixels: Megapixels;
  requestMs: number;
  worker: ProcessMemory;
  proxy: ProcessMemory | null;
  /** Bytes held by the pipeline at its fullest (buffers + codec wasm memories), from X-Pipeline-Peak-Bytes. */
  pipelineBytesInstrumented: number | null;
  /** The memory guard's prediction; over MEMORY_BUDGET_MB's default (100) a deployment refuses the request. */
  pipelineBytesPlanned: number | null;
  target: { text: string; pass: boolean } | null;
}

export interface LoadWorkloadResult extends LoadResult {
  id: 'W6' | 'W7';
  title: string;
  usersNote: string;
  /** CPU time per response of the user-Worker workerd and of the proxy workerd in front of it. */
  workerCpuMsPerResponse: number | null;
  proxyCpuMsPerResponse: number | null;
}

export interface Baselines {
  meMs: number;
  tinyPostMs: number;
  tinyPostBytes: number;
  /** A 32x32 PNG -> WebP conversion: median ms, and of each of its steps (Server-Timing). */
  tinyConvertMs: number;
  tinyConvertSteps: Record<string, number>;
  uploadOnlyMs: number;
  uploadOnlyBytes: number;
}

export interface BenchReport {
  schema: 1;
  date: string;
  durationS: number;
  options: Omit<BenchOptions, 'only'> & { only: string[] };
  machine: {
    cpu: string;
    cores: number;
    totalMemoryBytes: number;
    kernel: string;
    loadavgStart: number[];
    loadavgEnd: number[];
    /** CPU time stolen by the hypervisor over the whole run, in %. */
    stealPercent: number | null;
    /** workerd or vitest processes not started by the bench, seen between measurements. */
    foreignProcessesSeen: string[];
  };
  versions: Record<string, string>;
  git: { commit: string | null; modified: string[] };
  inputs: { file: string; bytes: number; width: number; height: number; orientation: number }[];
  method: Record<string, string>;
  baselines: Baselines | null;
  timed: TimedResult[];
  memory: MemoryResult[];
  matrix: MatrixResult[];
  load: LoadWorkloadResult[];
  bundle: BundleResult | null;
  auto: AutoTimes[];
  errors: { phase: string; message: string }[];
  warnings: string[];
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

const photoCache = new Map<string, Buffer>();
function photo(name: string): Buffer {
  let bytes = photoCache.get(name);
  if (!bytes) photoCache.set(name, (bytes = readFileSync(path.join(PHOTOS_DIR, name))));
  return bytes;
}

function fileFor(name: string) {
  return { name, type: 'image/jpeg', bytes: photo(name) };
}

const activeServers = new Set<DevServer>();
/** Warnings for the report, e.g. wrangler dev reloading because source files changed mid-run. */
const warnings: string[] = [];
const foreignSeen = new Set<string>();
/** Notes processes that compete for the CPU (a test run, another dev server); called between measurements. */
function scanForeign(): void {
  for (const p of foreignProcesses([...activeServers].flatMap((s) => s.groups()))) {
    if (!foreignSeen.has(p)) log(`warning: ${p} is running and competes for the CPU`);
    foreignSeen.add(p);
  }
}
const reloads = (server: DevServer) => (server.output().match(/Reloading local server/g) ?? []).length;

/**
 * DIAGNOSTIC_HEADERS: processing answers say how many bytes the pipeline held (memory-meter.ts).
 * The memory guard and pixel limits are lifted so that every workload runs and its memory is
 * measured, including those a deployment refuses (12 MP AVIF and WebP results, 24 MP inputs).
 */
const BENCH_VARS = ['DIAGNOSTIC_HEADERS:true', 'MEMORY_BUDGET_MB:4096', 'MAX_INPUT_MEGAPIXELS:40', 'MAX_OUTPUT_MEGAPIXELS:40'].flatMap((v) => ['--var', v]);

/** The matrix runs what a deployment runs: the default memory budget and pixel limits. */
const DEFAULT_CONFIG_VARS = ['--var', 'DIAGNOSTIC_HEADERS:true'];

async function withServer<T>(options: BenchOptions, label: string, work: (server: DevServer) => Promise<T>, wranglerArgs = BENCH_VARS): Promise<T> {
  const server = await startDevServer({ verbose: options.verbose, timeoutMs: 120_000, wranglerArgs });
  activeServers.add(server);
  const reloadsAtStart = reloads(server);
  try {
    return await work(server);
  } finally {
    // wrangler dev watches the sources: an edit during the run reloads the Worker (and can
    // break a request in flight with "Your worker restarted mid-request").
    const during = reloads(server) - reloadsAtStart;
    if (during > 0) {
      const message = `${label}: wrangler dev reloaded the Worker ${during} time(s) because source files changed during the run; its figures mix code versions`;
      warnings.push(message);
      log(`warning: ${message}`);
    }
    await server.stop();
    activeServers.delete(server);
  }
}

function versions(): Record<string, string> {
  const version = (pkgJson: string) => {
    try {
      return (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  const fromWrangler = createRequire(path.join(PROJECT_ROOT, 'node_modules', 'wrangler', 'package.json'));
  const resolved = (name: string) => {
    try {
      return version(fromWrangler.resolve(`${name}/package.json`));
    } catch {
      return 'unknown';
    }
  };
  const fromRoot = createRequire(path.join(PROJECT_ROOT, 'package.json'));
  return {
    node: process.versions.node,
    sharp: sharp.versions.sharp ?? 'unknown',
    libvips: sharp.versions.vips,
    'libvips mozjpeg': sharp.versions.mozjpeg ?? 'unknown',
    'libvips webp': sharp.versions.webp ?? 'unknown',
    'libvips aom': sharp.versions.aom ?? 'unknown',
    wrangler: version(path.join(PROJECT_ROOT, 'node_modules', 'wrangler', 'package.json')),
    workerd: resolved('workerd'),
    miniflare: resolved('miniflare'),
    autocannon: version(fromRoot.resolve('autocannon/package.json')),
  };
}

function gitInfo(): { commit: string | null; modified: string[] } {
  // Read-only git: HEAD and which tracked files differ from it (no index refresh).
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    return { commit, modified: status.split('\n').filter(Boolean).map((l) => l.slice(3)) };
  } catch {
    return { commit: null, modified: [] };
  }
}

// ---------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------

async function timeApi(client: ApiClient, workerPid: number, endpoint: string, body: MultipartBody, options: BenchOptions, label: string) {
  let last;
  for (let i = 0; i < options.warmup; i++) last = await client.process(DEMO_PRO_KEY, endpoint, body);
  const runsMs: number[] = [];
  const workerCpuMs: number[] = [];
  const steps: Record<string, number>[] = [];
  for (let i = 0; i < options.runs; i++) {
    const cpuBefore = cpuMs(workerPid);
    last = await client.process(DEMO_PRO_KEY, endpoint, body);
    workerCpuMs.push(cpuMs(workerPid) - cpuBefore);
    runsMs.push(last.ms);
    steps.push(last.steps);
    log(`${label} API run ${i + 1}/${options.runs}: ${last.ms.toFixed(1)} ms (workerd CPU ${workerCpuMs.at(-1)!.toFixed(0)} ms)`);
  }
  return { runsMs, workerCpuMs, stepsMs: medianSteps(steps), result: last!.result };
}

/** The median of each step over runs (a step missing from a run counts 0 there). */
export function medianSteps(runs: Record<string, number>[]): Record<string, number> {
  const names = [...new Set(runs.flatMap((run) => Object.keys(run)))];
  return Object.fromEntries(names.map((name) => [name, round(median(runs.map((run) => run[name] ?? 0)), 1)]));
}

async function timeSharp(w: TimedWorkload, input: Buffer, options: BenchOptions) {
  let out: Buffer | undefined;
  for (let i = 0; i < options.warmup; i++) out = await w.sharp(input).toBuffer();
  const runsMs: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    out = await w.sharp(input).toBuffer();
    runsMs.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
    log(`${w.id} sharp run ${i + 1}/${options.runs}: ${runsMs.at(-1)!.toFixed(1)} ms, CPU ${cpuMs.at(-1)!.toFixed(1)} ms`);
  }
  return { runsMs, cpuMs, out: out! };
}

function evaluate(id: string, api: SideResult, sharpSide: SideResult, ratio: number, equalSsim: TimedResult['equalSsim']): { text: string; pass: boolean; checks: Check[] } {
  const checks: Check[] = [];
  const bytesWithin = (share: number) => Math.abs(api.bytes - sharpSide.bytes) <= share * sharpSide.bytes;
  switch (id) {
    case 'W1':
    case 'W8':
      checks.push({ what: 'time <= 1.0x sharp', pass: ratio <= 1.0 });
      break;
    case 'W11':
      checks.push({ what: 'time <= 1.5x sharp', pass: ratio <= 1.5 });
      break;
    case 'W2':
      checks.push({ what: 'time <= 1.5x sharp', pass: ratio <= 1.5 });
      checks.push({ what: 'bytes <= sharp', pass: api.bytes <= sharpSide.bytes });
      checks.push({ what: 'SSIM >= sharp', pass: api.ssim >= sharpSide.ssim - 1e-4 });
      break;
    case 'W3':
      checks.push({ what: 'time <= 0.5x sharp effort 3 at equal SSIM', pass: equalSsim !== null && equalSsim.ratio <= 0.5 });
      checks.push({ what: 'bytes <= 1.05x sharp at equal SSIM', pass: equalSsim !== null && api.bytes <= 1.05 * equalSsim.sharp.bytes });
      break;
    case 'W4':
    case 'W6':
      checks.push({ what: 'time <= 1.5x sharp', pass: ratio <= 1.5 });
      break;
    case 'W5':
      checks.push({ what: 'wall time < 20 ms', pass: api.medianMs < 20 });
      break;
    case 'W9':
      checks.push({ what: 'time <= 2x sharp', pass: ratio <= 2 });
      break;
    case 'W10':
      checks.push({ what: 'time <= 1.5x sharp', pass: ratio <= 1.5 });
      checks.push({ what: 'bytes <= sharp', pass: api.bytes <= sharpSide.bytes });
      break;
  }
  const text = TIMED_WORKLOADS.find((w) => w.id === id)!.target;
  return { text, pass: checks.every((c) => c.pass), checks };
}

async function runTimed(client: ApiClient, workerPid: number, w: TimedWorkload, options: BenchOptions, source: RawImage): Promise<TimedResult> {
  const input = w.inputName ? Buffer.from(await largeInput(w.inputName)) : photo(PHOTO[w.megapixels ?? 12]);
  const body = multipartBody(w.fields, { name: w.inputName ?? PHOTO[w.megapixels ?? 12], type: 'application/octet-stream', bytes: input });
  log(`${w.id}: ${w.title}`);
  const apiCpu = cpuTimes();
  const apiTimes = await timeApi(client, workerPid, w.endpoint, body, options, w.id);
  const apiSteal = stealPercent(apiCpu);
  const apiBytes = await client.download(apiTimes.result.download_url);
  if (apiBytes.length !== apiTimes.result.size) throw new Error(`${w.id}: downloaded ${apiBytes.length} bytes, the Result says ${apiTimes.result.size}`);
  const sharpCpu = cpuTimes();
  const sharpTimes = await timeSharp(w, input, options);
  const sharpSteal = stealPercent(sharpCpu);

  if (options.saveOutputs) {
    const dir = path.join(path.dirname(options.out), 'outputs');
    mkdirSync(dir, { recursive: true });
    const ext = apiTimes.result.format;
    writeFileSync(path.join(dir, `${w.id}-api.${ext}`), apiBytes);
    writeFileSync(path.join(dir, `${w.id}-sharp.${ext}`), sharpTimes.out);
  }
  const reference = await w.reference(w.megapixels ? await decodeRgb(photo(PHOTO[w.megapixels])) : source);
  const apiPixels = await decodeRgb(apiBytes);
  const sharpPixels = await decodeRgb(sharpTimes.out);
  const side = (label: string, runsMs: number[], bytes: number, pixels: RawImage, steal: number | null): SideResult => ({
    label,
    runsMs: runsMs.map((ms) => round(ms, 2)),
    medianMs: round(median(runsMs), 2),
    bytes,
    width: pixels.width,
    height: pixels.height,
    ssim: round(ssim(reference, pixels), 5),
    psnr: round(psnr(reference, pixels), 2),
    stealPercent: steal,
  });
  const api: ApiSideResult = {
    ...side(`POST ${w.endpoint} ${new URLSearchParams(w.fields).toString()}`, apiTimes.runsMs, apiBytes.length, apiPixels, apiSteal),
    endpoint: w.endpoint,
    fields: w.fields,
    workerCpuMs: apiTimes.workerCpuMs.map((ms) => round(ms, 1)),
    medianWorkerCpuMs: round(median(apiTimes.workerCpuMs), 1),
    stepsMs: apiTimes.stepsMs,
  };
  const sharpSide = { ...side(w.sharpLabel, sharpTimes.runsMs, sharpTimes.out.length, sharpPixels, sharpSteal), medianCpuMs: round(median(sharpTimes.cpuMs), 1) };
  const ratio = round(api.medianMs / sharpSide.medianMs, 3);
  let equalSsim: TimedResult['equalSsim'] = null;
  if (w.sharpAtQuality) {
    const quality = await qualityForSsim(w, input, reference, api.ssim);
    const times = await timeSharp({ ...w, sharp: (bytes) => w.sharpAtQuality!(bytes, quality) }, input, options);
    const pixels = await decodeRgb(times.out);
    const matched = side(`${w.sharpLabel} at quality ${quality}`, times.runsMs, times.out.length, pixels, null);
    equalSsim = { quality, sharp: matched, ratio: round(api.medianMs / matched.medianMs, 3) };
    log(`${w.id}: sharp at quality ${quality} reaches SSIM ${matched.ssim} (API ${api.ssim}): ${matched.medianMs.toFixed(1)} ms, ${matched.bytes} bytes`);
  }
  const target = evaluate(w.id, api, sharpSide, ratio, equalSsim);
  log(`${w.id}: API ${api.medianMs.toFixed(1)} ms, sharp ${sharpSide.medianMs.toFixed(1)} ms, ratio ${ratio.toFixed(2)}x, target ${target.pass ? 'pass' : 'FAIL'}`);
  return { id: w.id, title: w.title, api, sharp: sharpSide, ratio, equalSsim, target };
}

/** The lowest quality at which sharp's output reaches `targetSsim` (bisection; 100 if none does). */
async function qualityForSsim(w: TimedWorkload, input: Buffer, reference: RawImage, targetSsim: number): Promise<number> {
  let low = 1;
  let high = 100;
  while (low < high) {
    const quality = (low + high) >> 1;
    const reached = ssim(reference, await decodeRgb(await w.sharpAtQuality!(input, quality).toBuffer()));
    log(`${w.id}: sharp at quality ${quality}: SSIM ${reached.toFixed(5)} (API ${targetSsim})`);
    if (reached >= targetSsim) high = quality;
    else low = quality + 1;
  }
  return low;
}

async function runBaselines(client: ApiClient, options: BenchOptions): Promise<Baselines> {
  const runs = Math.max(options.runs, 5);
  const timesOf = async (call: () => Promise<{ status: number; ms: number }>, expected: number, what: string) => {
    const first = await call();
    if (first.status !== expected) throw new Error(`${what} answered ${first.status}, expected ${expected}`);
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push((await call()).ms);
    return round(median(ms), 2);
  };
  const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 200, g: 120, b: 40 } } }).jpeg({ quality: 80 }).toBuffer();
  const tinyBody = multipartBody({}, { name: 'tiny.jpg', type: 'image/jpeg', bytes: tiny });
  // The 12 MP file with an invalid format: upload, multipart parsing, auth and validation, no image work.
  const uploadBody = multipartBody({ format: 'bmp' }, fileFor(PHOTO[12]));
  const meMs = await timesOf(() => client.call(DEMO_PRO_KEY, 'GET', '/api/v1/me'), 200, 'GET /api/v1/me');
  const tinyPostMs = await timesOf(() => client.call(DEMO_PRO_KEY, 'POST', '/api/v1/remove-metadata', tinyBody), 200, 'tiny remove-metadata');
  const uploadOnlyMs = await timesOf(() => client.call(DEMO_PRO_KEY, 'POST', '/api/v1/convert', uploadBody), 422, '12 MP upload with format=bmp');
  const tinyPng = await sharp({ create: { width: 32, height: 32, channels: 4, background: '#2a7ab0' } }).png().toBuffer();
  const tinyConvertBody = multipartBody({ format: 'webp' }, { name: 'tiny.png', type: 'image/png', bytes: tinyPng });
  const tinyConverts = [];
  for (let i = 0; i <= runs; i++) tinyConverts.push(await client.process(DEMO_PRO_KEY, '/api/v1/convert', tinyConvertBody));
  tinyConverts.shift(); // the first instantiates the codecs
  const tinyConvertMs = round(median(tinyConverts.map((r) => r.ms)), 2);
  const tinyConvertSteps = medianSteps(tinyConverts.map((r) => r.steps));
  log(`baselines: /me ${meMs} ms, tiny POST ${tinyPostMs} ms, 32x32 PNG -> WebP ${tinyConvertMs} ms, 12 MP upload refused ${uploadOnlyMs} ms`);
  return { meMs, tinyPostMs, tinyPostBytes: tinyBody.body.length, tinyConvertMs, tinyConvertSteps, uploadOnlyMs, uploadOnlyBytes: uploadBody.body.length };
}

interface LoadPlan {
  id: 'W6' | 'W7';
  title: string;
  method: 'GET' | 'POST';
  path: string;
  body?: MultipartBody;
}

function loadPlans(options: BenchOptions): LoadPlan[] {
  const plans: LoadPlan[] = [];
  if (options.only.has('W6')) {
    plans.push({
      id: 'W6',
      title: '1 MP JPEG -> resize 400 px -> WebP q80',
      method: 'POST',
      path: W6.endpoint,
      body: multipartBody(W6.fields, fileFor(W6.file)),
    });
  }
  if (options.only.has('W7')) plans.push({ id: 'W7', title: 'GET /api/v1/me (auth + rate limit)', method: 'GET', path: '/api/v1/me' });
  return plans;
}

const MAX_AUTO_USERS = 40;
/** Users per 10 requests per second measured: about 7 requests per second per user. */
const USERS_MARGIN = 1.5;

async function runLoadTests(server: DevServer, client: ApiClient, options: BenchOptions): Promise<LoadWorkloadResult[]> {
  const plans = loadPlans(options);
  if (!plans.length) return [];
  const keys = [DEMO_PRO_KEY];
  let userSerial = 0;
  const addUsers = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const start = Date.now();
      keys.push(await createProUser(`bench-${++userSerial}@bench.local`, server.persistTo));
      log(`made Pro user ${userSerial} with npm run admin (${Date.now() - start} ms)`);
    }
  };
  // Each plan is checked once (must answer 200) before any load.
  for (const plan of plans) {
    const res = await client.call(DEMO_PRO_KEY, plan.method, plan.path, plan.body);
    if (res.status !== 200) throw new Error(`${plan.id}: ${plan.method} ${plan.path} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  }
  let usersNote: string;
  if (options.loadUsers === 'auto') {
    await addUsers(3);
    // Probe the fastest workload for 3 s and aim at about 7 requests per second per user; if
    // the real run still meets 429s, more users are made and that workload runs again.
    const fastest = plans.at(-1)!;
    await sleep(1100);
    const probe = await runLoad({ url: server.url, method: fastest.method, path: fastest.path, body: fastest.body, keys, connections: options.loadConnections, seconds: 3 });
    const wanted = Math.min(MAX_AUTO_USERS, Math.max(keys.length, Math.ceil((probe.rpsAll * USERS_MARGIN) / 10)));
    log(`probe ${fastest.id}: ${probe.rpsAll.toFixed(0)} responses/s with ${keys.length} keys -> ${wanted} Pro users`);
    await addUsers(wanted - keys.length);
    usersNote = `auto: ${keys.length} Pro users (probe ${fastest.id}: ${probe.rpsAll.toFixed(0)} responses/s, aiming at ~7 req/s per user)`;
  } else {
    await addUsers(options.loadUsers - 1);
    usersNote = `${keys.length} Pro users (--load-users)`;
  }

  const results: LoadWorkloadResult[] = [];
  const processes = findWorkerd(server.groups());
  const worker = processes.find((p) => p.role === 'worker');
  const proxy = processes.find((p) => p.role === 'proxy');
  const runPlan = async (plan: LoadPlan) => {
    await sleep(1100); // every user's one-second window empty again
    log(`${plan.id}: ${plan.title}, ${options.loadConnections} connections for ${options.loadSeconds} s over ${keys.length} keys`);
    const before = [worker, proxy].map((p) => (p ? cpuMs(p.pid) : 0));
    const r = await runLoad({ url: server.url, method: plan.method, path: plan.path, body: plan.body, keys, connections: options.loadConnections, seconds: options.loadSeconds });
    const [workerCpu, proxyCpu] = [worker, proxy].map((p, i) => (p && r.responses ? round((cpuMs(p.pid) - before[i]) / r.responses, 2) : null));
    log(`${plan.id}: ${r.rpsOk.toFixed(1)} req/s (200), p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, 429: ${r.rateLimited}, workerd CPU ${workerCpu} ms per response`);
    return { ...r, workerCpuMsPerResponse: workerCpu, proxyCpuMsPerResponse: proxyCpu };
  };
  for (const plan of plans) {
    let r = await runPlan(plan);
    let note = usersNote;
    if (options.loadUsers === 'auto' && r.rateLimited > 0 && keys.length < MAX_AUTO_USERS) {
      const wanted = Math.min(MAX_AUTO_USERS, Math.ceil((r.rpsAll * USERS_MARGIN) / 10));
      if (wanted > keys.length) {
        const before = keys.length;
        log(`${plan.id}: ${r.rateLimited} responses were 429 with ${before} users; making ${wanted - before} more and running it again`);
        await addUsers(wanted - before);
        note += `; ${plan.id} run again with ${keys.length} users after ${r.rateLimited} 429s with ${before}`;
        r = await runPlan(plan);
      }
    }
    results.push({ id: plan.id, title: plan.title, usersNote: note, ...r });
    scanForeign();
  }
  return results;
}

const MEMORY_LIMIT_KB = 128 * 1024;

/** The streaming-codecs issue's bounds on what the pipeline holds (X-Pipeline-Peak-Bytes), and workerd's growth within an isolate's 128 MB. */
function memoryTarget(id: string, mp: Megapixels, aboveIdleKb: number, heldBytes: number | null): MemoryResult['target'] {
  const MiB = 2 ** 20;
  const held = id === 'W1' && mp === 12 ? 8 : mp === 12 ? 64 : 100;
  const pass = heldBytes !== null && heldBytes <= held * MiB && aboveIdleKb <= MEMORY_LIMIT_KB;
  return { text: `held <= ${held} MiB, workerd +<= 128 MiB`, pass };
}

async function runMemory(id: TimedWorkload['id'], mp: Megapixels, options: BenchOptions): Promise<MemoryResult> {
  const { endpoint, fields } = memoryFields(id);
  const body = multipartBody(fields, fileFor(PHOTO[mp]));
  return withServer(options, `memory ${id} ${mp} MP`, async (server) => {
    const client = new ApiClient(server.url);
    const me = await client.call(DEMO_PRO_KEY, 'GET', '/api/v1/me');
    if (me.status !== 200) throw new Error(`GET /api/v1/me answered ${me.status}`);
    await sleep(500);
    const processes = findWorkerd(server.groups());
    const worker = processes.find((p) => p.role === 'worker');
    if (!worker) throw new Error(`no user-Worker workerd found in process groups ${server.groups().join(', ')}`);
    const { value, memory } = await sampleDuring(processes, () => client.process(DEMO_PRO_KEY, endpoint, body));
    const workerMemory = memory.find((m) => m.role === 'worker')!;
    const proxyMemory = memory.find((m) => m.role === 'proxy') ?? null;
    log(
      `memory ${id} ${mp} MP: worker workerd idle ${(workerMemory.idleKb / 1024).toFixed(1)} MiB, peak ${(workerMemory.peakKb / 1024).toFixed(1)} MiB ` +
        `(+${(workerMemory.aboveIdleKb / 1024).toFixed(1)} MiB), request ${value.ms.toFixed(0)} ms`,
    );
    return {
      id,
      megapixels: mp,
      requestMs: round(value.ms, 1),
      worker: workerMemory,
      proxy: proxyMemory,
      pipelineBytesInstrumented: value.pipelinePeakBytes,
      pipelineBytesPlanned: value.pipelinePlannedBytes,
      target: memoryTarget(id, mp, workerMemory.aboveIdleKb, value.pipelinePeakBytes),
    };
  });
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

export async function main(argv: string[]): Promise<number> {
  let options: BenchOptions;
  try {
    const parsed = parseOptions(argv);
    if (parsed === 'help') {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    options = parsed;
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (options.loadMix) {
    const sides = await runLoadMix(argv.some((a) => a.startsWith('--load-seconds')) ? options.loadSeconds : 60, options.verbose, log);
    const table = loadTable(sides, new Date().toISOString().slice(0, 10));
    process.stdout.write(table + '\n');
    log(`wrote the table into ${writeMarkedTable('load-table', table)}`);
    return table.includes('(missed)') ? 1 : 0;
  }
  if (options.versusService) {
    const rows = await runVersusService(options.runs, options.verbose, log);
    const table = versusTable(rows, options.runs, new Date().toISOString().slice(0, 10), os.loadavg().map((l) => l.toFixed(1)).join(' '));
    process.stdout.write(table + '\n');
    log(`wrote the table into ${writeMarkedTable('versus-table', table)}`);
    return table.includes('(missed)') ? 1 : 0;
  }
  if (options.rtt) {
    const rows = await runRtt(options.rtt, options.verbose, log);
    const table = rttTable(rows, options.rtt, new Date().toISOString().slice(0, 10));
    process.stdout.write(table + '\n');
    log(`wrote the table into ${writeMarkedTable('rtt-table', table)}`);
    return rows.every((row) => row.allowedExtraMs === null || row.farMs - row.nearbyMs <= row.allowedExtraMs) ? 0 : 1;
  }
  if (options.runs < 5) log(`note: --runs ${options.runs} (the issue asks for at least 5)`);

  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping the dev servers`);
    void Promise.allSettled([...activeServers].map((s) => s.stop())).then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  sharp.concurrency(1);
  sharp.cache(false);

  const started = Date.now();
  const startCpu = cpuTimes();
  const cpus = os.cpus();
  const report: BenchReport = {
    schema: 1,
    date: new Date().toISOString(),
    durationS: 0,
    options: { ...options, only: [...options.only] },
    machine: {
      cpu: cpus[0]?.model ?? 'unknown',
      cores: cpus.length,
      totalMemoryBytes: os.totalmem(),
      kernel: `${os.type()} ${os.release()}`,
      loadavgStart: os.loadavg().map((n) => round(n, 2)),
      loadavgEnd: [],
      stealPercent: null,
      foreignProcessesSeen: [],
    },
    versions: versions(),
    git: gitInfo(),
    inputs: [],
    method: {
      workerCpu: 'CPU time of the user-Worker workerd process (all threads, /proc/<pid>/task/*/schedstat) during each timed API call: the server-side work, including local D1/R2/Durable Object, without waiting',
      api: 'wall time of the whole HTTP call from this process (multipart body built in memory beforehand, upload, processing, R2/D1 writes, JSON answer parsed), Pro demo key, calls on one key paced >= 110 ms apart (untimed); the result downloaded once afterwards (untimed)',
      sharp: 'sharp in this process, sharp.concurrency(1), sharp.cache(false); only the pipeline call (input buffer already in memory) to toBuffer() is timed',
      runs: `median of ${options.runs} runs after ${options.warmup} warm-up run(s), each side`,
      ssim: SSIM_DESCRIPTION + '; reference = the source decoded by sharp (for W1 resized from the full decode with lanczos3 to the output size, for W4 the same region)',
      psnr: PSNR_DESCRIPTION + ', same reference',
      memory:
        'a fresh wrangler dev per measurement; VmRSS of the user-Worker workerd (the one with --inspector-addr) sampled every 10 ms and VmHWM (reset via clear_refs just before), idle = after start-up and one GET /api/v1/me; peak above idle in MiB; the proxy workerd in front is reported apart',
      load: 'autocannon, fixed connections and duration, requests round robin over the keys of several Pro users made with npm run admin; latency percentiles over all responses, 429s counted apart',
      bundle: 'wrangler deploy --dry-run --outdir <tmp>: all modules except source maps; gzip = zlib default level over their concatenation (as wrangler reports it)',
    },
    baselines: null,
    timed: [],
    memory: [],
    matrix: [],
    load: [],
    bundle: null,
    auto: [],
    errors: [],
    warnings,
  };
  for (const file of Object.values(PHOTO)) {
    const meta = await sharp(photo(file)).metadata();
    report.inputs.push({ file, bytes: photo(file).length, width: meta.width, height: meta.height, orientation: meta.orientation ?? 1 });
    // The API applies EXIF orientation and the sharp side does not call rotate(): fine only for orientation 1.
    if ((meta.orientation ?? 1) !== 1) log(`warning: ${file} has EXIF orientation ${meta.orientation}; the sharp side does not rotate`);
  }
  scanForeign();

  const attempt = async <T>(phase: string, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (err) {
      if (interrupted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      log(`${phase} failed: ${message}`);
      report.errors.push({ phase, message });
      return undefined;
    }
  };

  if (!options.skipBundle) {
    log('bundle: wrangler deploy --dry-run');
    report.bundle = (await attempt('bundle', measureBundle)) ?? null;
  }

  const timedSelected = TIMED_WORKLOADS.filter((w) => options.only.has(w.id));
  const loadSelected = !options.skipLoad && (options.only.has('W6') || options.only.has('W7'));
  const timedRuns = options.skipTimed ? [] : timedSelected;
  if (timedRuns.length || loadSelected) {
    await attempt('dev server', () =>
      withServer(options, 'timed and load runs', async (server) => {
        log(`dev server at ${server.url}`);
        const client = new ApiClient(server.url);
        report.baselines = (await attempt('baselines', () => runBaselines(client, options))) ?? null;
        if (timedRuns.length) {
          const source = await decodeRgb(photo(PHOTO[12]));
          const worker = findWorkerd(server.groups()).find((p) => p.role === 'worker');
          if (!worker) throw new Error(`no user-Worker workerd found in process groups ${server.groups().join(', ')}`);
          for (const w of timedRuns) {
            const result = await attempt(w.id, () => runTimed(client, worker.pid, w, options, source));
            if (result) report.timed.push(result);
            scanForeign();
          }
        }
        if (loadSelected) report.load = (await attempt('load', () => runLoadTests(server, client, options))) ?? [];
      }),
    );
  }

  if (!options.skipMemory) {
    // The memory runs send the 12 and 24 MP corpus JPEGs: workloads on other inputs are in the matrix.
    for (const w of timedSelected.filter((workload) => !workload.inputName)) {
      for (const mp of options.memorySizes) {
        const result = await attempt(`memory ${w.id} ${mp} MP`, () => runMemory(w.id, mp, options));
        if (result) report.memory.push(result);
        scanForeign();
      }
    }
  }

  if (!options.skipAuto) {
    // The deployment's memory budget: auto's plan must fit it as the plain conversion's does.
    await attempt('quality=auto', () =>
      withServer(options, 'quality=auto', async (server) => {
        const worker = findWorkerd(server.groups()).find((p) => p.role === 'worker');
        if (!worker) throw new Error(`no user-Worker workerd found in process groups ${server.groups().join(', ')}`);
        report.auto = await runQualityAuto(new ApiClient(server.url), worker.pid, photo(PHOTO[12]), options.runs, log);
      }, DEFAULT_CONFIG_VARS),
    );
    scanForeign();
  }

  if (!options.skipMatrix) {
    const wanted = (input: string) => !options.matrixInputs.length || options.matrixInputs.some((part) => input.includes(part));
    await attempt('matrix', () =>
      withServer(options, 'full-size matrix', async (server) => {
        const client = new ApiClient(server.url);
        for (const c of matrixCases(wanted)) {
          const result = await attempt(`matrix ${c.input} ${c.operation}`, () => runMatrixCase(client, c));
          if (result) {
            report.matrix.push(result);
            log(`matrix ${c.input} ${c.operation}: ${result.outcome} ${result.ms} ms, held ${((result.peakBytes ?? 0) / 2 ** 20).toFixed(1)} MiB, planned ${((result.plannedBytes ?? 0) / 2 ** 20).toFixed(1)} MiB`);
          }
        }
      }, DEFAULT_CONFIG_VARS),
    );
    scanForeign();
  }

  report.machine.loadavgEnd = os.loadavg().map((n) => round(n, 2));
  report.machine.stealPercent = stealPercent(startCpu);
  scanForeign();
  report.machine.foreignProcessesSeen = [...foreignSeen];
  report.durationS = round((Date.now() - started) / 1000, 1);
  printReport(report);
  if (report.auto.length) {
    process.stdout.write(`\n## quality=auto against q80, 12 MP photo (medians of ${options.runs}, alternating)\n\n${autoTable(report.auto)}\n`);
    for (const r of report.auto.filter((result) => !result.pass)) report.errors.push({ phase: 'quality=auto', message: `${r.format}: auto took ${r.ratio.toFixed(2)}x the time of q80 (bound ${r.bound}x)` });
  }
  mkdirSync(path.dirname(options.out), { recursive: true });
  writeFileSync(options.out, JSON.stringify(report, null, 2) + '\n');
  process.stdout.write(`\nJSON: ${path.relative(process.cwd(), options.out) || options.out}\n`);
  return report.errors.length ? 1 : 0;
}
