/** The lock file that keeps two processes off one PGlite data directory. */
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { isProcessAlive, processToken } from '../core/process.js';

/**
 * PGlite is single-process: a second process opening the same directory corrupts it. A pid file
 * beside the data refuses a second opener while the first is alive and is taken over when stale.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, '..', `${dataDir.split('/').pop() ?? 'pgdata'}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      // The pid alone is not proof: after a crash or reboot it may belong to another program.
      await handle.writeFile(JSON.stringify({ pid: process.pid, token: await processToken(process.pid) }));
      await handle.close();
      return async () => {
        await rm(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await lockHolder(lockPath);
      if (holder !== undefined) {
        throw new BatonError(
          'database_unavailable',
          `The embedded database in ${dataDir} is in use by another baton process (pid ${holder}). ` +
            'Stop it first, or set DATABASE_URL so several processes can share PostgreSQL.',
          { details: { dataDir, pid: holder } },
        );
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new BatonError('database_unavailable', `Could not lock the embedded database in ${dataDir}.`);
}

/**
 * The live baton process holding a PGlite lock file, or undefined when the lock is stale: its pid
 * is gone, is ours, or now names another process (its start token differs; for a lock written
 * before tokens existed, a process whose command line does not mention baton).
 */
async function lockHolder(lockPath: string): Promise<number | undefined> {
  const text = await readFile(lockPath, 'utf8').catch(() => '');
  let pid: number;
  let token: string | undefined;
  try {
    const parsed = JSON.parse(text) as { pid?: unknown; token?: unknown };
    pid = typeof parsed === 'number' ? parsed : Number(parsed.pid);
    token = typeof parsed === 'object' && typeof parsed.token === 'string' ? parsed.token : undefined;
  } catch {
    pid = Number.NaN;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isProcessAlive(pid)) return undefined;
  const current = await processToken(pid);
  if (token !== undefined && current !== undefined) return token === current ? pid : undefined;
  if (current === undefined) return pid; // no procfs: the live pid is all there is to go on
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return /baton/i.test(cmdline) ? pid : undefined;
}
