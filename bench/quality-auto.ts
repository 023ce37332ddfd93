/// <reference types="node" />
/**
 * quality=auto against q80 on the 12 MP photo through the API (issue 39: at most 2.5x the time of
 * q80 for JPEG and WebP, 1.5x for AVIF; no more memory than the plain conversion plus the metric's
 * share), in the same run, calls alternating so that a busy machine slows both alike. The gate
 * is on medians of wall time; the workerd CPU time, what the pipeline held (X-Pipeline-Peak-Bytes)
 * and the machine's load are printed beside it.
 */
import os from 'node:os';
import { cpuMs } from './memory.ts';
import { DEMO_PRO_KEY, multipartBody, type ApiClient } from './api.ts';
import { median } from './timing.ts';

export interface AutoTimes {
  format: string;
  bound: number;
  q80: { medianMs: number; cpuMs: number; bytes: number; peakBytes: number | null; runsMs: number[] };
  auto: { medianMs: number; cpuMs: number; bytes: number; peakBytes: number | null; plannedBytes: number | null; quality: number; score: unknown; runsMs: number[] };
  ratio: number;
  cpuRatio: number;
  pass: boolean;
  load: number[];
}

/** The issue's bounds on auto's time against q80's at 12 MP. */
export const AUTO_TIME_BOUNDS: Record<string, number> = { jpg: 2.5, webp: 2.5, avif: 1.5 };

export async function runQualityAuto(client: ApiClient, workerPid: number, photo: Uint8Array, runs: number, log: (line: string) => void): Promise<AutoTimes[]> {
  const results: AutoTimes[] = [];
  for (const [format, bound] of Object.entries(AUTO_TIME_BOUNDS)) {
    const bodies = {
      q80: multipartBody({ format, quality: '80' }, { name: 'photo-12mp.jpg', type: 'image/jpeg', bytes: photo }),
      auto: multipartBody({ format, quality: 'auto' }, { name: 'photo-12mp.jpg', type: 'image/jpeg', bytes: photo }),
    };
    const sides = { q80: { ms: [] as number[], cpu: [] as number[] }, auto: { ms: [] as number[], cpu: [] as number[] } };
    const last: Record<string, Awaited<ReturnType<ApiClient['process']>>> = {};
    const loads: number[] = [];
    // One warm-up of each, then the two alternate.
    for (let run = -1; run < runs; run++) {
      for (const side of ['q80', 'auto'] as const) {
        const before = cpuMs(workerPid);
        const response = await client.process(DEMO_PRO_KEY, '/api/v1/convert', bodies[side]);
        const cpu = cpuMs(workerPid) - before;
        last[side] = response;
        if (run < 0) continue;
        sides[side].ms.push(response.ms);
        sides[side].cpu.push(cpu);
      }
      if (run >= 0) loads.push(os.loadavg()[0]);
      if (run >= 0) log(`quality=auto ${format} run ${run + 1}/${runs}: q80 ${sides.q80.ms.at(-1)!.toFixed(0)} ms, auto ${sides.auto.ms.at(-1)!.toFixed(0)} ms (load ${os.loadavg()[0].toFixed(2)})`);
    }
    const auto = last.auto.result as typeof last.auto.result & { quality: number; score: unknown };
    const ratio = median(sides.auto.ms) / median(sides.q80.ms);
    results.push({
      format,
      bound,
      q80: { medianMs: median(sides.q80.ms), cpuMs: median(sides.q80.cpu), bytes: last.q80.result.size, peakBytes: last.q80.pipelinePeakBytes, runsMs: sides.q80.ms },
      auto: {
        medianMs: median(sides.auto.ms),
        cpuMs: median(sides.auto.cpu),
        bytes: auto.size,
        peakBytes: last.auto.pipelinePeakBytes,
        plannedBytes: last.auto.pipelinePlannedBytes,
        quality: auto.quality,
        score: auto.score,
        runsMs: sides.auto.ms,
      },
      ratio,
      cpuRatio: median(sides.auto.cpu) / median(sides.q80.cpu),
      pass: ratio <= bound,
      load: loads,
    });
  }
  return results;
}

export function autoTable(results: AutoTimes[]): string {
  const mib = (bytes: number | null) => (bytes === null ? '-' : (bytes / 2 ** 20).toFixed(1));
  const lines = [
    '| output | q80 ms (CPU) | auto ms (CPU) | auto / q80 wall (CPU) | bound | quality, score | bytes auto / q80 | held q80 / auto MiB | load |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const score = r.auto.score as { value: number; measured_on: string } | null;
    lines.push(
      `| ${r.format} | ${r.q80.medianMs.toFixed(0)} (${r.q80.cpuMs.toFixed(0)}) | ${r.auto.medianMs.toFixed(0)} (${r.auto.cpuMs.toFixed(0)}) | ${r.ratio.toFixed(2)}x (${r.cpuRatio.toFixed(2)}x) ${r.pass ? 'pass' : 'FAIL'} | ${r.bound}x | q${r.auto.quality}, ${score?.value} (${score?.measured_on}) | ${(r.auto.bytes / r.q80.bytes).toFixed(3)} | ${mib(r.q80.peakBytes)} / ${mib(r.auto.peakBytes)} | ${Math.min(...r.load).toFixed(1)}-${Math.max(...r.load).toFixed(1)} |`,
    );
  }
  return lines.join('\n');
}
