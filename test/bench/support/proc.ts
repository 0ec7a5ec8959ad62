/**
 * Reading a process from the outside through Linux `/proc` (proc(5)): resident memory, CPU time
 * and open descriptors, the way an operator would watch the service.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';

/** Clock ticks per second of `utime`/`stime` in /proc/<pid>/stat (`getconf CLK_TCK`, almost always 100). */
export const CLOCK_TICKS_PER_S = readClockTicks();

function readClockTicks(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

/** A `kB` field of /proc/<pid>/status, e.g. `VmRSS`, in KiB. */
async function statusKb(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]);
}

/** Resident set size, in KiB. */
export function rssKb(pid: number | 'self'): Promise<number> {
  return statusKb(pid, 'VmRSS');
}

/** Peak resident set size since start or since {@link resetPeakRss}, in KiB. */
export function peakRssKb(pid: number | 'self'): Promise<number> {
  return statusKb(pid, 'VmHWM');
}

/** Resets `VmHWM` to the current RSS (writes 5 to /proc/<pid>/clear_refs, Linux ≥ 4.0). */
export async function resetPeakRss(pid: number | 'self'): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** User plus system CPU time the process used so far, in ms (fields 14 and 15 of /proc/<pid>/stat). */
export async function cpuTimeMs(pid: number | 'self'): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_S;
}

/** Resident memory by kind (RssAnon, RssFile, RssShmem of /proc/<pid>/status), in KiB: anonymous is heaps and wasm memory, file-backed the node binary and mapped libraries. */
export async function rssBreakdownKb(
  pid: number | 'self',
): Promise<{ anonKb: number; fileKb: number; shmemKb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { anonKb: field('RssAnon'), fileKb: field('RssFile'), shmemKb: field('RssShmem') };
}

/** Number of open file descriptors. */
export async function fdCount(pid: number | 'self'): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

/** One sample of a process. */
export interface ProcSample {
  /** ms since the sampler started. */
  atMs: number;
  rssKb: number;
  cpuMs: number;
  fds: number;
}

/** Samples `pid` now. */
export async function sample(pid: number, startedAtMs: number): Promise<ProcSample> {
  const [rss, cpu, fds] = await Promise.all([rssKb(pid), cpuTimeMs(pid), fdCount(pid)]);
  return { atMs: performance.now() - startedAtMs, rssKb: rss, cpuMs: cpu, fds };
}
