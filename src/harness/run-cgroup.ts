/**
 * Tracking every process of a run by something no child can drop.
 *
 * `BATON_RUN_ID` in the environment (process-tree.ts) is lost by a tool started as
 * `setsid env -i …`, which then survived `/stop`. Two mechanisms, best first:
 *
 * 1. A cgroup v2 per run (`<baton's own cgroup>/baton-<run id>`): the CLI is moved into it right
 *    after spawn and everything it starts stays inside, whatever it does with its session or
 *    environment. Stopping writes `cgroup.kill` (Linux ≥ 5.14; else SIGKILL to each pid in
 *    `cgroup.procs`). It needs write access to baton's own cgroup: root, or a systemd unit with
 *    `Delegate=yes` (a user unit under `user@.service` gets its own cgroup subtree). Measured
 *    here: cgroup v2 hybrid mount at `/sys/fs/cgroup/unified`, kernel 6.18, as root — a
 *    `setsid`-started `sleep` inside the cgroup is killed by `cgroup.kill`.
 * 2. Where no cgroup can be made: every descendant of the CLI seen by a poll of `/proc` (pid and
 *    start time, so a reused pid is never signalled). A process that left the tree between two
 *    polls cannot be found; the outcome then says that processes may have survived.
 *
 * Linux only; elsewhere neither applies and the environment scan is all there is.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signalQuietly } from './process-tree.js';

/** Where run cgroups are made, or why none can be. */
export type CgroupSupport = { parent: string } | { unavailable: string };

/**
 * Finds the cgroup v2 directory of this process, under which run cgroups are created, and checks
 * that one can be made there (a probe directory is created and removed).
 *
 * @returns `{ parent }` or `{ unavailable: why }`; never throws.
 */
export async function detectCgroupSupport(): Promise<CgroupSupport> {
  try {
    const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
    // Field 5 is the mount point; the file system type follows the ` - ` separator.
    const mount = mountinfo
      .split('\n')
      .map((line) => line.split(' - '))
      .find(([, after]) => after?.startsWith('cgroup2 '))?.[0]
      ?.split(' ')[4];
    if (!mount) return { unavailable: 'no cgroup v2 file system is mounted' };
    const own = (await readFile('/proc/self/cgroup', 'utf8')).split('\n').find((line) => line.startsWith('0::'));
    if (!own) return { unavailable: 'this process has no cgroup v2 path' };
    const parent = join(mount, own.slice(3).trim());
    const probe = join(parent, `baton-probe-${process.pid}`);
    await mkdir(probe);
    await rmdir(probe);
    return { parent };
  } catch (err) {
    return { unavailable: `cannot create a cgroup here (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** The processes of one run, found by its cgroup or by following its process tree. */
export interface RunProcesses {
  /** How they are tracked: `cgroup` (complete) or `tree` (what polls saw). */
  readonly mechanism: 'cgroup' | 'tree';
  /** Why a run that could have had a cgroup is followed by its tree instead (for the log). */
  readonly fallbackReason?: string;
  /** Pids of the run's live processes known to this tracker. */
  pids(): Promise<number[]>;
  /** SIGKILLs every process it knows, waits (up to `waitMs`) until none is left, and stops tracking. */
  killAll(waitMs: number): Promise<number[]>;
}

/**
 * Starts tracking the processes of the run whose root is `rootPid`. Call it synchronously right
 * after spawn: it moves the CLI into the run's cgroup before the CLI has had time to start
 * anything (both CLIs are Node programs that take tens of ms to boot), so every later descendant
 * is born inside. Synchronous on purpose: no await may come between spawn and the output readers.
 *
 * @param support from {@link detectCgroupSupport}.
 * @param pollMs how often the process tree is walked when there is no cgroup, in ms.
 */
export function trackRunProcesses(support: CgroupSupport, runId: string, rootPid: number, pollMs = 250): RunProcesses {
  if ('unavailable' in support) return treeTracker(rootPid, pollMs);
  const dir = join(support.parent, `baton-${runId}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return treeTracker(rootPid, pollMs, `cannot create ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    writeFileSync(join(dir, 'cgroup.procs'), String(rootPid));
    return cgroupTracker(dir);
  } catch (err) {
    // The CLI exited already (ESRCH), or the cgroup refuses processes (EBUSY where controllers
    // are enabled): follow the tree instead.
    try {
      rmdirSync(dir);
    } catch {
      // Left empty; a later run of another id is unaffected.
    }
    return treeTracker(
      rootPid,
      pollMs,
      `cannot move pid ${rootPid} into ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}

/**
 * The cgroup a run got from an earlier baton process (restart reconciliation), so whatever is
 * still inside can be killed; undefined when there is none.
 */
export function existingRunCgroup(support: CgroupSupport, runId: string): RunProcesses | undefined {
  if ('unavailable' in support) return undefined;
  const dir = join(support.parent, `baton-${runId}`);
  try {
    readFileSync(join(dir, 'cgroup.procs'));
  } catch {
    return undefined;
  }
  return cgroupTracker(dir);
}

function cgroupTracker(dir: string): RunProcesses {
  return {
    mechanism: 'cgroup',
    // A process may create child cgroups under the run's (it may write there): they count too.
    pids: async () => (await subtree(dir)).flatMap((group) => group.pids),
    killAll: async (waitMs) => {
      const end = performance.now() + waitMs;
      let left = (await subtree(dir)).flatMap((group) => group.pids);
      while (left.length > 0 && performance.now() < end) {
        try {
          // Kills every process of the cgroup and of its descendants (cgroup v2, Linux ≥ 5.14).
          await writeFile(join(dir, 'cgroup.kill'), '1');
        } catch {
          for (const pid of left) signalQuietly(pid, 'SIGKILL');
        }
        await sleep(20);
        left = (await subtree(dir)).flatMap((group) => group.pids);
      }
      if (left.length === 0) {
        // Deepest first: a cgroup with children cannot be removed.
        for (const group of (await subtree(dir)).reverse()) await rmdir(group.dir).catch(() => undefined);
      }
      return left;
    },
  };
}

/** `dir` and every cgroup below it, parents before children, each with its pids. */
async function subtree(dir: string): Promise<{ dir: string; pids: number[] }[]> {
  const groups: { dir: string; pids: number[] }[] = [];
  const visit = async (current: string, depth: number): Promise<void> => {
    let procs: string;
    try {
      procs = await readFile(join(current, 'cgroup.procs'), 'utf8');
    } catch {
      return; // removed meanwhile
    }
    groups.push({ dir: current, pids: procs.split('\n').filter(Boolean).map(Number) });
    if (depth >= 16) return;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await visit(join(current, entry.name), depth + 1);
  };
  await visit(dir, 0);
  return groups;
}

/** pid → start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot). */
type Seen = Map<number, string>;

function treeTracker(rootPid: number, pollMs: number, fallbackReason?: string): RunProcesses {
  const seen: Seen = new Map();
  const rootStart = startTime(rootPid);
  if (rootStart) seen.set(rootPid, rootStart);
  const poll = (): void => {
    for (const [pid, ppid, start] of processTable()) {
      if (!seen.has(pid) && seen.has(ppid)) seen.set(pid, start);
    }
  };
  poll();
  const timer = setInterval(poll, pollMs);
  timer.unref();
  const alive = (): number[] =>
    [...seen].filter(([pid, start]) => startTime(pid) === start && !isZombie(pid)).map(([pid]) => pid);
  return {
    mechanism: 'tree',
    ...(fallbackReason ? { fallbackReason } : {}),
    pids: async () => {
      poll();
      return alive();
    },
    killAll: async (waitMs) => {
      poll();
      clearInterval(timer);
      const end = performance.now() + waitMs;
      let left = alive();
      while (left.length > 0 && performance.now() < end) {
        for (const pid of left) signalQuietly(pid, 'SIGKILL');
        await sleep(20);
        left = alive();
      }
      return left;
    },
  };
}

/** Every process as `[pid, ppid, start time]`, read synchronously so a poll sees one moment. */
function processTable(): [number, number, string][] {
  const rows: [number, number, string][] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return rows;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields) rows.push([Number(name), Number(fields[1]), fields[19] ?? '']);
  }
  return rows;
}

/** The fields of `/proc/<pid>/stat` after the command name: [state, ppid, …]; undefined when gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function startTime(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

function isZombie(pid: number): boolean {
  return statFields(pid)?.[0] === 'Z';
}
