/**
 * One service per `$BATON_HOME`. A second `baton start` on a home whose service runs would, with
 * PostgreSQL, join the fleet as a second node of the same name and take over the home's
 * `service.json` (the port and admin token `baton doctor`, `baton ask` and the approval servers
 * use). `$BATON_HOME/service.lock`, created exclusively at start and removed at stop, names the
 * process that holds the home; a start that finds it held by a live baton process is refused.
 */
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from './core/errors.js';

/** What the lock file holds. */
interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601. */
  startedAt: string;
}

/** Options of {@link acquireServiceLock}. */
export interface ServiceLockOptions {
  batonHome: string;
  /** This host's name, written for the refusal's words. */
  host: string;
  /** This process's pid. @default process.pid */
  pid?: number;
  /** Whether `pid` is a live baton process on this host (a reused pid of another program is not). */
  isLocalBaton: (pid: number) => boolean;
  now?: () => Date;
}

/** A held lock. */
export interface ServiceLock {
  /** Removes the lock file when it is still this process's (never another's). */
  release(): Promise<void>;
}

/** `$BATON_HOME/service.lock`. */
export function serviceLockPath(batonHome: string): string {
  return join(batonHome, 'service.lock');
}

/**
 * Takes the home for this process. A lock file left by a process that is gone (killed, crashed,
 * the machine restarted), or by this very process (an earlier start-up attempt, a container's
 * reused pid 1), is taken over; a lock of another host is taken over too, since its process
 * cannot be seen from here and a home moved to a new machine must still start.
 *
 * @throws BatonError `service_running` when a live baton process on this host holds the home.
 */
export async function acquireServiceLock(options: ServiceLockOptions): Promise<ServiceLock> {
  const path = serviceLockPath(options.batonHome);
  const pid = options.pid ?? process.pid;
  const mine: LockHolder = { pid, host: options.host, startedAt: (options.now?.() ?? new Date()).toISOString() };
  // Twice at most: once more after a stale file was removed. A start that races this one to the
  // same stale file finds the file this one wrote, and is refused.
  for (let attempt = 0; ; attempt++) {
    // Written whole, then linked into place: link() fails on an existing file, so the lock is
    // taken atomically and never seen half-written.
    const draft = `${path}.${pid}.tmp`;
    await writeFile(draft, JSON.stringify(mine), { mode: 0o600 });
    try {
      await link(draft, path);
      return { release: () => releaseIfMine(path, pid) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    } finally {
      await unlink(draft).catch(() => undefined);
    }
    const holder = await readHolder(path);
    if (holder && holder.pid !== pid && holder.host === options.host && options.isLocalBaton(holder.pid)) {
      throw new BatonError(
        'service_running',
        `baton is already running on this home (${options.batonHome}): pid ${holder.pid}, started ${holder.startedAt}. ` +
          'One home runs one service. Stop that one first (`kill ' + String(holder.pid) + '`, or `systemctl --user stop baton` when it runs as a service), ' +
          'or start this one with its own BATON_HOME (and, sharing a database, its own [node] name).',
        { details: { pid: holder.pid, path } },
      );
    }
    await unlink(path).catch((unlinkErr: unknown) => {
      if ((unlinkErr as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkErr;
    });
  }
}

/** The holder named in the lock file; undefined when it is unreadable or not a lock (then stale). */
async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0 || typeof parsed.host !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host, startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : 'at an unknown time' };
  } catch {
    return undefined;
  }
}

async function releaseIfMine(path: string, pid: number): Promise<void> {
  const holder = await readHolder(path);
  if (holder?.pid === pid) await unlink(path).catch(() => undefined);
}
