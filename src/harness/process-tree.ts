/**
 * Finding and killing every process of a run. Both CLIs start tool shells in sessions of their own,
 * so signalling the process group alone leaves them running. Every child
 * of a run carries `BATON_RUN_ID=<id>` in its environment, which survives re-parenting to init, so
 * `/proc/<pid>/environ` finds them all (Linux only).
 */
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pids of live processes whose environment holds `BATON_RUN_ID=<runId>`. */
export async function findRunProcesses(runId: string): Promise<number[]> {
  const marker = Buffer.from(`\0BATON_RUN_ID=${runId}\0`);
  const first = Buffer.from(`BATON_RUN_ID=${runId}\0`);
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  await Promise.all(
    entries.map(async (name) => {
      if (!/^\d+$/.test(name)) return;
      const pid = Number(name);
      if (pid === process.pid) return;
      try {
        const environ = await readFile(`/proc/${name}/environ`);
        if (environ.includes(marker) || environ.subarray(0, first.length).equals(first)) {
          if (!(await isZombie(pid))) found.push(pid);
        }
      } catch {
        // The process ended meanwhile, or belongs to another user: not ours either way.
      }
    }),
  );
  return found.sort((a, b) => a - b);
}

async function isZombie(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Sends `signal` to a pid or a process group (negative pid), ignoring ones already gone. */
export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Options for {@link terminateRun}. */
export interface TerminateOptions {
  /** The run's root process, leader of its own process group. */
  rootPid: number | undefined;
  runId: string;
  /** How long to wait after SIGINT before SIGKILL, in ms. */
  graceMs: number;
  /** How often to look for survivors, in ms. @default 50 */
  pollMs?: number;
  /** More pids of the run, from its cgroup or process tree (run-cgroup.ts). @default none */
  trackedPids?: () => Promise<number[]>;
}

/**
 * Stops a run: SIGINT to the group (codex then stops its tools), a grace period,
 * then SIGKILL to the group and to every process still carrying the run's id.
 *
 * @returns the pids that needed SIGKILL; resolves only when no process of the run is left, or
 *   after ten more grace periods (a process in uninterruptible sleep), whichever comes first.
 */
export async function terminateRun(options: TerminateOptions): Promise<number[]> {
  const pollMs = options.pollMs ?? 50;
  const find = async (): Promise<number[]> => {
    const [byEnv, tracked] = await Promise.all([findRunProcesses(options.runId), options.trackedPids?.() ?? []]);
    return [...new Set([...byEnv, ...tracked])].sort((a, b) => a - b);
  };
  // Looked at once before any signal: a tree tracker must see the run's processes while their
  // parents are alive, or a tool that leaves the tree when the CLI exits is never found.
  await options.trackedPids?.();
  if (options.rootPid) signalQuietly(-options.rootPid, 'SIGINT');
  const graceEnd = performance.now() + options.graceMs;
  while (performance.now() < graceEnd) {
    if ((await find()).length === 0) return [];
    await sleep(pollMs);
  }
  const survivors = await find();
  if (options.rootPid) signalQuietly(-options.rootPid, 'SIGKILL');
  for (const pid of survivors) signalQuietly(pid, 'SIGKILL');
  const killEnd = performance.now() + options.graceMs * 10;
  while (performance.now() < killEnd) {
    const left = await find();
    if (left.length === 0) break;
    for (const pid of left) signalQuietly(pid, 'SIGKILL');
    await sleep(pollMs);
  }
  return survivors;
}
