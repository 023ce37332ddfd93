/// <reference types="node" />
/**
 * Memory of a fresh workerd serving one request. wrangler dev runs two workerd processes:
 * the user Worker's (started with `--inspector-addr`; it runs the pipeline, and local D1, R2
 * and the Durable Object) and the entry proxy in front of it. Both are measured; the user
 * Worker's is the figure compared with the 128 MB isolate limit.
 *
 * Idle = VmRSS after start-up and one warm `GET /api/v1/me`. Peak = the larger of VmRSS
 * sampled every 10 ms during the request and the kernel's VmHWM, whose high-water mark is
 * reset (`echo 5 > /proc/<pid>/clear_refs`) just before the request.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

export interface WorkerdProcess {
  pid: number;
  role: 'worker' | 'proxy';
}

/** The workerd processes inside the given process groups. */
export function findWorkerd(groups: number[]): WorkerdProcess[] {
  const found: WorkerdProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!groups.includes(Number(fields[2]))) continue;
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'workerd') continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      found.push({ pid: Number(entry), role: cmdline.some((a) => a.startsWith('--inspector-addr')) ? 'worker' : 'proxy' });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/**
 * Processes that compete for the CPU and are not ours: workerd outside the given process
 * groups, and vitest (e.g. `npm test` running meanwhile). As "name pid" strings.
 */
export function foreignProcesses(groups: number[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'workerd') {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (!groups.includes(Number(fields[2]))) found.push(`workerd ${entry}`);
      } else if (comm === 'node' && /vitest/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) {
        found.push(`vitest ${entry}`);
      }
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!m) throw new Error(`no ${field} for pid ${pid}`);
  return Number(m[1]);
}

/** Resets VmHWM to the current RSS; false where the kernel or permissions do not allow it. */
function resetHighWaterMark(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface ProcessMemory {
  pid: number;
  role: 'worker' | 'proxy';
  idleKb: number;
  sampledPeakKb: number;
  /** VmHWM after the request, if the high-water mark could be reset before it. */
  hwmKb: number | null;
  peakKb: number;
  aboveIdleKb: number;
  samples: number;
}

/** Samples the processes' RSS every `intervalMs` while `work` runs. */
export async function sampleDuring<T>(processes: WorkerdProcess[], work: () => Promise<T>, intervalMs = 10): Promise<{ value: T; memory: ProcessMemory[] }> {
  const idle = processes.map((p) => statusKb(p.pid, 'VmRSS'));
  const hwmReset = processes.map((p) => resetHighWaterMark(p.pid));
  const peak = [...idle];
  let samples = 0;
  const sample = () => {
    samples++;
    processes.forEach((p, i) => {
      try {
        peak[i] = Math.max(peak[i], statusKb(p.pid, 'VmRSS'));
      } catch {
        // process gone; reported by the caller's request failing
      }
    });
  };
  const timer = setInterval(sample, intervalMs);
  let value: T;
  try {
    value = await work();
    // Let the Worker finish whatever follows the response (R2/D1 writes, freeing).
    await new Promise((resolve) => setTimeout(resolve, 100));
    sample();
  } finally {
    clearInterval(timer);
  }
  const memory = processes.map((p, i): ProcessMemory => {
    const hwmKb = hwmReset[i] ? statusKb(p.pid, 'VmHWM') : null;
    const peakKb = Math.max(peak[i], hwmKb ?? 0);
    return { pid: p.pid, role: p.role, idleKb: idle[i], sampledPeakKb: peak[i], hwmKb, peakKb, aboveIdleKb: peakKb - idle[i], samples };
  });
  return { value, memory };
}

/** Jiffies from the aggregate `cpu` line of /proc/stat: all, and stolen by the hypervisor. */
export function cpuTimes(): { total: number; steal: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}

/** Percentage of CPU time stolen by the hypervisor since `since` (null where not known). */
export function stealPercent(since: { total: number; steal: number }): number | null {
  const now = cpuTimes();
  const total = now.total - since.total;
  return total > 0 ? Math.round((1000 * (now.steal - since.steal)) / total) / 10 : null;
}

/** CPU time in ms a process has used so far, all its threads (schedstat, nanosecond precision). */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // thread exited meanwhile
    }
  }
  return ns / 1e6;
}
