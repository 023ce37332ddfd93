/// <reference types="node" />
/** Plain-text tables of a benchmark report, on stdout. */
import type { BenchReport } from './main.ts';

const out = (line = '') => process.stdout.write(line + '\n');

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 100 ? int(n) : n.toFixed(1));
const mib = (kb: number) => (kb / 1024).toFixed(1);
const passFail = (pass: boolean) => (pass ? 'pass' : 'FAIL');
const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : 'inf');

/** Left-aligns the first `leftColumns` columns, right-aligns the rest. */
function table(header: string[], rows: string[][], leftColumns = 1, alignLeft: number[] = []): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < leftColumns || alignLeft.includes(i) ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  out(line(header));
  out(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) out(line(r));
}

/** Request steps, then the pipeline's stages, in the order a request meets them. */
const STEP_COLUMNS = ['auth', 'rate', 'idempotency', 'quota', 'admission', 'form', 'upload', 'pipeline', 'pipeline.decode', 'pipeline.colour', 'pipeline.flatten', 'pipeline.resize', 'pipeline.smart-crop', 'pipeline.cut', 'pipeline.pad', 'pipeline.orient', 'pipeline.encode', 'pipeline.copies', 'pipeline.turns', 'pipeline.store', 'total'];

/** Where each workload's time goes in the Worker (Server-Timing medians; copies are inside decode and encode). */
function stepsTable(report: BenchReport): void {
  out();
  out('Where the time goes (median ms per step, from the Worker\'s Server-Timing): pipeline is the whole run with the result streamed to R2 as it is');
  out('encoded (the stages after it are its parts; copies is part of decode and encode; turns are idle time given to other requests; store is from the');
  out('end of the run to the result stored: its last part to R2, the upload completed, the record in D1)');
  table(
    ['workload', ...STEP_COLUMNS.map((c) => c.replace('pipeline.', '')), 'workerd CPU'],
    report.timed.map((t) => [t.id, ...STEP_COLUMNS.map((c) => (t.api.stepsMs[c] === undefined ? '-' : ms(t.api.stepsMs[c]))), ms(t.api.medianWorkerCpuMs)]),
  );
}

export function printReport(report: BenchReport): void {
  const { machine, versions } = report;
  out();
  out(`Benchmark ${report.date} (${report.durationS} s)`);
  out(
    `machine: ${machine.cpu}, ${machine.cores} cores, ${(machine.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.kernel}; ` +
      `load average ${machine.loadavgStart.join(' ')} at start, ${machine.loadavgEnd.join(' ')} at end; ` +
      `CPU stolen by the hypervisor: ${machine.stealPercent ?? '?'}%`,
  );
  out(`versions: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  out(`git: ${report.git.commit ?? 'unknown'}${report.git.modified.length ? ` + uncommitted changes in ${report.git.modified.join(', ')}` : ''}`);
  if (machine.foreignProcessesSeen.length) {
    out(`WARNING: processes not started by the bench competed for the CPU (${machine.foreignProcessesSeen.join(', ')}): figures may be disturbed`);
  }
  out(`inputs (../shared/corpus/photos): ${report.inputs.map((i) => `${i.file} ${i.width}x${i.height} ${int(i.bytes)} B orientation ${i.orientation}`).join('; ')}`);
  out(`runs: ${report.method.runs}`);

  if (report.timed.length) {
    out();
    out('Times (median ms; input photo-12mp.jpg): API = the whole HTTP call through wrangler dev; sharp = in this process, concurrency 1');
    table(
      ['workload', 'API ms', 'API workerd CPU ms', 'sharp ms', 'sharp CPU ms', 'ratio', 'CPU ratio', 'API bytes', 'sharp bytes', 'API SSIM', 'sharp SSIM', 'API PSNR', 'sharp PSNR', 'target', 'result'],
      report.timed.map((t) => [
        `${t.id} ${t.title}`,
        ms(t.api.medianMs),
        ms(t.api.medianWorkerCpuMs),
        ms(t.sharp.medianMs),
        t.sharp.medianCpuMs === undefined ? '?' : ms(t.sharp.medianCpuMs),
        `${t.ratio.toFixed(2)}x`,
        t.sharp.medianCpuMs ? `${(t.api.medianWorkerCpuMs / t.sharp.medianCpuMs).toFixed(2)}x` : '?',
        int(t.api.bytes),
        int(t.sharp.bytes),
        t.api.ssim.toFixed(4),
        t.sharp.ssim.toFixed(4),
        fixed(t.api.psnr, 2),
        fixed(t.sharp.psnr, 2),
        t.target.text,
        t.target.pass ? 'pass' : `FAIL (${t.target.checks.filter((c) => !c.pass).map((c) => c.what).join('; ')})`,
      ]),
      1,
      [13, 14],
    );
    for (const t of report.timed.filter((t) => t.equalSsim)) {
      const e = t.equalSsim!;
      out(`${t.id} at equal SSIM: sharp at quality ${e.quality} reaches SSIM ${e.sharp.ssim.toFixed(4)} in ${ms(e.sharp.medianMs)} ms with ${int(e.sharp.bytes)} bytes: API ${e.ratio.toFixed(2)}x its time, ${(t.api.bytes / e.sharp.bytes).toFixed(3)}x its bytes`);
    }
    out('sharp side:');
    for (const t of report.timed) out(`  ${t.id}: ${t.sharp.label}; output ${t.sharp.width}x${t.sharp.height} (API ${t.api.width}x${t.api.height})`);
    out('Runs (ms; CPU stolen by the hypervisor meanwhile, a sign of a noisy machine):');
    for (const t of report.timed) {
      const runs = (r: number[]) => r.map(ms).join(' ');
      out(`  ${t.id}: API ${runs(t.api.runsMs)} (steal ${t.api.stealPercent ?? '?'}%); sharp ${runs(t.sharp.runsMs)} (steal ${t.sharp.stealPercent ?? '?'}%)`);
    }
    out(`SSIM: ${report.method.ssim}`);
    out(`PSNR: ${report.method.psnr}`);
    stepsTable(report);
  }

  if (report.baselines) {
    const b = report.baselines;
    out();
    out('Reference round trips (median, same key and pacing):');
    out(`  GET /api/v1/me (auth + rate limit + account read):          ${ms(b.meMs)} ms`);
    out(`  POST remove-metadata of a 16x16 JPEG (${int(b.tinyPostBytes)} bytes body):      ${ms(b.tinyPostMs)} ms`);
    out(`  POST the 12 MP file with format=bmp -> 422 (upload + parse):  ${ms(b.uploadOnlyMs)} ms (${int(b.uploadOnlyBytes)} bytes body)`);
    out(`  POST a 32x32 PNG -> WebP conversion:                           ${ms(b.tinyConvertMs)} ms`);
    out('  its steps (median ms, Server-Timing): ' + Object.entries(b.tinyConvertSteps).map(([step, t]) => `${step} ${ms(t)}`).join(', '));
  }

  if (report.memory.length) {
    out();
    out('Memory: one request on a fresh wrangler dev; user-Worker workerd RSS (MiB), peak = max(sampled every 10 ms, VmHWM)');
    table(
      ['workload', 'input', 'idle', 'peak', 'above idle', 'sampled peak', 'proxy above idle', 'request ms', 'pipeline bytes (instrumented)', 'planned (guard)', 'default config', 'target', 'result'],
      report.memory.map((m) => [
        m.id,
        `${m.megapixels} MP`,
        mib(m.worker.idleKb),
        mib(m.worker.peakKb),
        mib(m.worker.aboveIdleKb),
        mib(m.worker.sampledPeakKb),
        m.proxy ? mib(m.proxy.aboveIdleKb) : '-',
        ms(m.requestMs),
        m.pipelineBytesInstrumented === null ? '-' : mib(m.pipelineBytesInstrumented / 1024),
        m.pipelineBytesPlanned === null ? '-' : mib(m.pipelineBytesPlanned / 1024),
        m.pipelineBytesPlanned === null ? '-' : m.pipelineBytesPlanned <= 100 * 2 ** 20 ? 'runs' : 'refused',
        m.target?.text ?? '-',
        m.target ? passFail(m.target.pass) : '',
      ]),
      1,
      [8, 9, 10, 11, 12],
    );
  }

  if (report.load.length) {
    out();
    out(`Load (autocannon, ${report.load[0].connections} connections, ${report.options.loadSeconds} s each; requests round robin over Pro users' keys):`);
    for (const l of report.load) out(`  ${l.id}: ${l.usersNote}`);
    table(
      ['workload', 'keys', 'responses', '200', '429', 'other', 'req/s (200)', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'CPU ms/resp worker', 'proxy'],
      report.load.map((l) => [
        `${l.id} ${l.title}`,
        String(l.keys),
        int(l.responses),
        int(l.ok),
        int(l.rateLimited),
        Object.entries(l.otherStatus).map(([code, n]) => `${code}:${n}`).join(' ') + (l.errors ? ` errors:${l.errors}` : '') || '0',
        l.rpsOk.toFixed(1),
        ms(l.latencyMs.p50),
        ms(l.latencyMs.p90),
        ms(l.latencyMs.p99),
        ms(l.latencyMs.max),
        l.workerCpuMsPerResponse?.toFixed(2) ?? '?',
        l.proxyCpuMsPerResponse?.toFixed(2) ?? '?',
      ]),
    );
    out('Latency percentiles are over all responses; 429s (per-user rate limit) are counted apart and should be 0.');
    out('CPU ms/resp: CPU time of the user-Worker workerd (auth, rate-limit Durable Object, D1, R2, the handler) and of the proxy workerd, per response.');
  }

  if (report.bundle) {
    const b = report.bundle;
    out();
    out(
      `Bundle (wrangler deploy --dry-run): ${int(b.totalBytes)} bytes, gzip ${int(b.gzipBytes)} bytes ` +
        `(wrangler: ${b.wranglerReport ?? '?'}); Free plan limit 3 MiB gzip (${int(b.limitGzipBytes)}): ${passFail(b.pass)}`,
    );
    for (const f of b.files) out(`  ${f.name.padEnd(28)} ${int(f.bytes).padStart(11)}  gzip ${int(f.gzipBytes).padStart(11)}`);
  }

  const targets = [
    ...report.timed.map((t) => t.target.pass),
    ...report.memory.filter((m) => m.target).map((m) => m.target!.pass),
    ...(report.bundle ? [report.bundle.pass] : []),
  ];
  out();
  out(`Targets: ${targets.filter(Boolean).length} pass, ${targets.filter((p) => !p).length} fail`);
  if (report.warnings.length) {
    out('WARNINGS:');
    for (const w of report.warnings) out(`  ${w}`);
  }
  if (report.errors.length) {
    out('ERRORS:');
    for (const e of report.errors) out(`  ${e.phase}: ${e.message.split('\n')[0]}`);
  }

  if (report.matrix.length) {
    out();
    out('Full-size matrix (default configuration: the memory budget and pixel limits a deployment has; one call each)');
    const mibOf = (bytes: number | null) => (bytes === null ? '-' : (bytes / 2 ** 20).toFixed(1));
    table(
      ['input', 'operation', 'result', 'size', 'held MiB', 'predicted MiB', 'limit MiB', 'ms', 'note'],
      report.matrix.map((m) => [
        m.input,
        m.operation,
        m.outcome,
        m.width === null ? '-' : `${m.width}x${m.height}`,
        mibOf(m.peakBytes),
        mibOf(m.plannedBytes),
        String(m.limitMiB),
        int(m.ms),
        m.outcome !== 'ok' ? (m.message ?? '').slice(0, 120) : m.peakBytes !== null && m.peakBytes / 2 ** 20 > m.limitMiB ? 'OVER THE MEMORY TARGET' : '',
      ]),
      2,
      [2, 8],
    );
  }
}
