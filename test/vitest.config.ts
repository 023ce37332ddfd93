import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { serveLargeInput } from './support/large-inputs.ts';
import { serveReferenceDecode } from './support/reference-decoder.ts';
import SlowestFirst from './slowest-first.ts';

const root = path.resolve(import.meta.dirname, '..');
const corpusRoot = path.resolve(root, '../shared/corpus');
const fixturesRoot = path.resolve(root, 'test/fixtures');

/** Serves a folder to tests running inside workerd, which have no file system; `?list` lists a folder. */
function serveFolder(folder: string) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const relative = decodeURIComponent(url.pathname).replace(/^\/+/, '');
    const file = path.resolve(folder, relative);
    if (!file.startsWith(folder + path.sep)) return new Response('outside the folder', { status: 400 });
    try {
      if (url.searchParams.has('list')) return Response.json((await readdir(file)).sort());
      return new Response(await readFile(file));
    } catch {
      return new Response(`no file ${relative}`, { status: 404 });
    }
  };
}

/** Node-side twin of wrangler's "Data" rule for .icc files (wrangler.toml): the default export is an ArrayBuffer. */
const iccAsArrayBuffer = {
  name: 'icc-as-array-buffer',
  load(id: string) {
    if (!id.endsWith('.icc')) return null;
    const base64 = readFileSync(id).toString('base64');
    return `export default Uint8Array.from(atob('${base64}'), (c) => c.charCodeAt(0)).buffer;`;
  },
};

/**
 * Node-side twin of wrangler's CompiledWasm rule: a static .wasm import is a compiled
 * WebAssembly.Module (the browser tests run the service's own encoders in Node).
 */
const wasmAsModule = {
  name: 'wasm-as-module',
  enforce: 'pre' as const,
  load(id: string) {
    const file = id.replace(/\?module$/, '');
    if (!file.endsWith('.wasm')) return null;
    return `import { readFileSync } from 'node:fs'; export default new WebAssembly.Module(readFileSync(${JSON.stringify(file)}));`;
  },
};

/** A project of tests inside workerd, with the Worker's bindings and the test file servers. */
function workersProject(test: { name: string; include: string[]; exclude?: string[]; isolate?: boolean; sequence?: { groupOrder: number } }) {
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: path.join(root, 'wrangler.toml') },
        miniflare: {
          serviceBindings: {
            CORPUS: serveFolder(corpusRoot),
            FIXTURES: serveFolder(fixturesRoot),
            REFERENCE: serveReferenceDecode,
            LARGE: serveLargeInput,
          },
        },
      }),
    ],
    // Codec work on 12 MP photos takes seconds, and longer when two files share the two cores.
    test: {
      root,
      setupFiles: ['test/workers/setup.ts'],
      testTimeout: 60_000,
      ...test,
    },
  };
}

export default defineConfig({
  root,
  test: {
    // The app's one log line per request (src/middleware/request-log) would drown the test report.
    onConsoleLog: (log) => !(log.startsWith('{"request_id"') && log.includes('"route":')),
    // Vitest runs one file at a time on a 2-core machine by default (cores - 1); the suite is
    // CPU-bound in workerd and Node, so two files at a time nearly halve it.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: SlowestFirst },
    // A failed comparison of pixel arrays would otherwise be printed whole: a diff of 100+ MB
    // that overflows the pool's WebSocket and crashes the worker instead of reporting the failure.
    diff: { truncateThreshold: 400, maxDepth: 4 },
    chaiConfig: { truncateThreshold: 400 },
    projects: [
      workersProject({ name: 'workers', include: ['src/**/*.test.ts', 'test/workers/**/*.test.ts'], exclude: ['src/image/**', 'test/workers/fairness.test.ts'] }),
      // Timed against a large run in the same isolate: after every other file, alone on the machine.
      workersProject({ name: 'fairness', include: ['test/workers/fairness.test.ts'], sequence: { groupOrder: 1 } }),
      // Pure unit tests of src/image (no storage, no module state they rely on being fresh): one
      // workerd runs them all instead of one per file, which saves ~1 s of start-up per file.
      workersProject({ name: 'image', include: ['src/image/**/*.test.ts'], isolate: false }),
      {
        // wasmAsModule: the fuzz suite drives the AVIF decoder's dav1d build in Node.
        plugins: [iccAsArrayBuffer, wasmAsModule],
        test: {
          name: 'node',
          // Through Vite rather than Node's loader, so that wasmAsModule sees the codecs' .wasm imports.
          server: { deps: { inline: [/@jsquash\//] } },
          root,
          environment: 'node',
          include: ['test/node/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // A 32x32 conversion beside a 24 MP one through `npm run dev` (timed): after every other
        // file and after the in-runtime fairness test, alone on the machine.
        test: {
          name: 'fairness-http',
          root,
          environment: 'node',
          include: ['test/fairness/**/*.test.ts'],
          sequence: { groupOrder: 2 },
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
      {
        // The web pages in headless Chromium against `npm run dev` (test/e2e/browser.ts finds Chromium).
        // Each file starts its own dev server (free ports) and browser, so it can overlap other files.
        plugins: [wasmAsModule],
        test: {
          name: 'browser',
          // Through Vite rather than Node's loader, so that wasmAsModule sees the codecs' .wasm imports.
          server: { deps: { inline: [/@jsquash\//] } },
          root,
          environment: 'node',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
