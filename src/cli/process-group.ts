/// <reference types="node" />
/**
 * Process groups, so `npm run dev` and the tests can stop wrangler dev together with every
 * workerd it started, and know for sure that nothing was left behind.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether any live process is left in process group `pgid`. Members that have
 * exited but not been reaped yet (zombies) do not count.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    if (code !== 'EPERM') throw err;
  }
  if (process.platform !== 'linux') return true;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // exited meanwhile
      }
      // "<pid> (<comm>) <state> <ppid> <pgrp> ..." and comm may contain spaces or parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    }
    return false;
  } catch {
    return true;
  }
}

/** Sends `signal` to every process of group `pgid`; false if the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until no process of the group is alive; true if that happened within `timeoutMs`. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

/** SIGTERM to the group, then SIGKILL if anything is still alive after `graceMs`. */
export async function stopGroup(pgid: number, graceMs = 5_000): Promise<void> {
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 5_000);
}
