/**
 * One service per `$BATON_HOME`. A second `baton start` on a home whose service runs would, with
 * PostgreSQL, join the fleet as a second node of the same name and take over the home's
 * `service.json` (the port and admin token `baton doctor`, `baton ask` and the approval servers
 * use). `$BATON_HOME/service.lock`, created exclusively at start and removed at stop, names the
 * process that holds the home; a start that finds it held by a live baton process is refused.
 *
 * A stale lock (its process gone) is removed under a break right: the file
 * `service.lock.break-<digest of the stale lock's bytes>`, created exclusively. Only the one start
 * that creates it may remove the lock, and only after reading it again and finding the same bytes;
 * so two starts that both saw the stale lock can never remove each other's fresh one, and the lock
 * itself is then taken by link(2), which exactly one of them wins. A break right left by a start
 * that died holding it is stale in turn and is removed the same way.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';

/** What the lock file (and a break right) holds. */
interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601. */
  startedAt: string;
  /** Makes every lock's bytes unique, so a digest names one lock and never a later one. */
  nonce?: string;
}

/** A lock file as read: its holder when it parses, and the digest of its bytes. */
interface LockFile {
  holder: LockHolder | undefined;
  digest: string;
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
  /** Removes the lock file when it is still this lock (never another's). */
  release(): Promise<void>;
}

/** `$BATON_HOME/service.lock`. */
export function serviceLockPath(batonHome: string): string {
  return join(batonHome, 'service.lock');
}

// Rounds of "take, or break the stale one" before giving up; each round either ends the start or
// removes one stale file, so only a flood of starts dying mid-way exhausts them.
const MAX_ROUNDS = 50;
// How long to let another start finish breaking a stale lock before looking again.
const BREAKER_WAIT_MS = 20;

/**
 * Takes the home for this process. A lock file left by a process that is gone (killed, crashed,
 * the machine restarted), or by this very process (an earlier start-up attempt, a container's
 * reused pid 1), is taken over; a lock of another host is taken over too, since its process
 * cannot be seen from here and a home moved to a new machine must still start. Of starts racing
 * for one home, exactly one takes it; the others are refused with its pid.
 *
 * @throws BatonError `service_running` when a live baton process on this host holds the home.
 * @throws BatonError `service_lock_busy` when the lock could not be settled after many rounds.
 */
export async function acquireServiceLock(options: ServiceLockOptions): Promise<ServiceLock> {
  const path = serviceLockPath(options.batonHome);
  const pid = options.pid ?? process.pid;
  const holds = (holder: LockHolder | undefined): holder is LockHolder =>
    holder !== undefined && holder.host === options.host && holder.pid !== pid && options.isLocalBaton(holder.pid);
  const fresh = (): LockHolder => ({
    pid,
    host: options.host,
    startedAt: (options.now?.() ?? new Date()).toISOString(),
    nonce: randomBytes(12).toString('hex'),
  });
  const mine = fresh();
  const mineBytes = JSON.stringify(mine);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (await createExclusive(path, mineBytes, pid)) return { release: () => releaseIfMine(path, digestOf(mineBytes)) };
    const current = await readLock(path);
    if (!current) continue; // removed in between: try again
    if (holds(current.holder)) {
      const holder = current.holder;
      throw new BatonError(
        'service_running',
        `baton is already running on this home (${options.batonHome}): pid ${holder.pid}, started ${holder.startedAt}. ` +
          'One home runs one service. Stop that one first (`kill ' +
          String(holder.pid) +
          '`, or `systemctl --user stop baton` when it runs as a service), ' +
          'or start this one with its own BATON_HOME (and, sharing a database, its own [node] name).',
        { details: { pid: holder.pid, path } },
      );
    }
    await removeStale(path, current, { pid, holds, fresh }, 0);
  }
  throw new BatonError(
    'service_lock_busy',
    `could not take ${path}: other starts kept changing it. Start again; if this repeats, stop the other starts on this home.`,
    { details: { path } },
  );
}

interface BreakContext {
  pid: number;
  holds: (holder: LockHolder | undefined) => holder is LockHolder;
  fresh: () => LockHolder;
}

/**
 * Removes `path` if it still is the stale file `seen`, holding the break right for it. Returns
 * without removing anything when another live start holds that right (it is doing the same) or
 * the file changed; the caller looks again.
 */
async function removeStale(path: string, seen: LockFile, ctx: BreakContext, depth: number): Promise<void> {
  // Each level is a break right left by a start that died holding the one below; a chain this
  // deep means something other than baton keeps writing these files.
  if (depth > 8)
    throw new BatonError(
      'service_lock_busy',
      `too many abandoned break files next to ${path}; remove ${path}* by hand and start again.`,
      { details: { path } },
    );
  const breakPath = `${path}.break-${seen.digest.slice(0, 32)}`;
  const right = JSON.stringify(ctx.fresh());
  if (await createExclusive(breakPath, right, ctx.pid)) {
    try {
      const now = await readLock(path);
      if (now?.digest === seen.digest) await unlinkIfPresent(path);
    } finally {
      await unlinkIfPresent(breakPath);
    }
    return;
  }
  const breaker = await readLock(breakPath);
  if (!breaker) return;
  if (ctx.holds(breaker.holder)) {
    await new Promise((resolve) => setTimeout(resolve, BREAKER_WAIT_MS));
    return;
  }
  await removeStale(breakPath, breaker, ctx, depth + 1);
}

/** Writes `bytes` whole under a unique draft name, then links it to `path`; false when `path` exists. */
async function createExclusive(path: string, bytes: string, pid: number): Promise<boolean> {
  const draft = `${path}.${pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, bytes, { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlinkIfPresent(draft);
  }
}

/** The file at `path` (holder undefined when it is not a lock, then stale); undefined when absent. */
async function readLock(path: string): Promise<LockFile | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return { holder: parseHolder(bytes.toString('utf8')), digest: digestOf(bytes) };
}

function parseHolder(text: string): LockHolder | undefined {
  let parsed: Partial<LockHolder>;
  try {
    parsed = JSON.parse(text) as Partial<LockHolder>;
  } catch {
    return undefined; // not JSON: not a lock any baton wrote whole, so stale
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  if (
    typeof parsed.pid !== 'number' ||
    !Number.isInteger(parsed.pid) ||
    parsed.pid <= 0 ||
    typeof parsed.host !== 'string'
  )
    return undefined;
  return {
    pid: parsed.pid,
    host: parsed.host,
    startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : 'at an unknown time',
  };
}

function digestOf(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

// By its bytes, not its pid: a start that reuses this pid (a container's pid 1 after a restart)
// writes a lock of its own, which this process's stop must leave alone.
async function releaseIfMine(path: string, digest: string): Promise<void> {
  const current = await readLock(path);
  if (current?.digest === digest) await unlinkIfPresent(path);
}
