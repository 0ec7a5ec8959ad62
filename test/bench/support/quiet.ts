/**
 * Waits for a quiet machine before a scenario measures: what an earlier scenario set going (a
 * PostgreSQL checkpoint after the delivery drain's million rows, the page cache writing back two
 * GiB of stream files, autovacuum) must not be timed as the next scenario's cost. Measured on the
 * 2-core bench machine on 2026-12-01: a warm start took 1,081 ms right after the soak, delivery
 * and stream scenarios (load average 2.2) against 821 ms alone.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** How busy the whole machine was over one sample, and whether the wait saw it quiet. */
export interface QuietWait {
  /** ms waited before the scenario began. */
  waitedMs: number;
  /** Busy share of all CPUs over the last 1 s sample, in percent (iowait counts as busy). */
  busyPercent: number;
  /** false when the limit ran out first: the scenario then measured a busy machine. */
  quiet: boolean;
}

/** Options of {@link waitForQuietMachine}. */
export interface QuietOptions {
  /** A sample counts as quiet at or below this busy share, in percent of all CPUs. Default 10. */
  maxBusyPercent?: number;
  /** Quiet samples needed in a row. Default 3. */
  samplesInARow?: number;
  /** Gives up after this long, in ms. Default 120,000. */
  timeoutMs?: number;
  /** Length of one sample, in ms. Default 1,000. */
  sampleMs?: number;
}

/** Busy and total jiffies of all CPUs, from the first line of /proc/stat (Linux, proc(5)). */
async function cpuJiffies(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number) as number[];
  const busy = user! + nice! + system! + iowait! + irq! + softirq! + steal!;
  return { busy, total: busy + idle! };
}

/**
 * Samples the machine's CPU use until `samplesInARow` samples in a row were at or below
 * `maxBusyPercent`, or `timeoutMs` passed. Never throws for a busy machine: the caller reports
 * what it returns beside its figures.
 *
 * @throws Error when /proc/stat cannot be read (not Linux).
 */
export async function waitForQuietMachine(options: QuietOptions = {}): Promise<QuietWait> {
  const { maxBusyPercent = 10, samplesInARow = 3, timeoutMs = 120_000, sampleMs = 1_000 } = options;
  const started = performance.now();
  let quietInARow = 0;
  let busyPercent = Number.NaN;
  let before = await cpuJiffies();
  for (;;) {
    await sleep(sampleMs);
    const after = await cpuJiffies();
    const total = after.total - before.total;
    // iowait may go down between two reads (proc(5)): a share is kept within 0–100.
    busyPercent = total > 0 ? Math.min(100, Math.max(0, (100 * (after.busy - before.busy)) / total)) : 0;
    before = after;
    quietInARow = busyPercent <= maxBusyPercent ? quietInARow + 1 : 0;
    const waitedMs = Math.round(performance.now() - started);
    if (quietInARow >= samplesInARow) return { waitedMs, busyPercent: Math.round(busyPercent * 10) / 10, quiet: true };
    if (waitedMs >= timeoutMs) return { waitedMs, busyPercent: Math.round(busyPercent * 10) / 10, quiet: false };
  }
}
