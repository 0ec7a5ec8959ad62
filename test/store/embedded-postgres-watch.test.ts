/**
 * The watcher of the embedded server (src/store/embedded-postgres-watch.ts), with real processes
 * standing in for the postmaster: a `sleep` working in the data directory, named by its pid file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchEmbeddedPostgres } from '../../src/store/embedded-postgres-watch.js';
import { waitFor } from '../support/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stand-in postmaster for `dataDir`: a process whose working directory it is, named in postmaster.pid. */
async function fakePostmaster(dataDir: string): Promise<ChildProcess> {
  const child = spawn('sleep', ['600'], { cwd: dataDir, stdio: 'ignore' });
  cleanups.push(() => void child.kill('SIGKILL'));
  await writeFile(join(dataDir, 'postmaster.pid'), `${child.pid}\n${dataDir}\n`);
  return child;
}

describe('watching the embedded PostgreSQL server', () => {
  it('restarts a server that is gone, backing off between failed attempts, one log line each', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'baton-watch-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const first = await fakePostmaster(dataDir);
    const lines: { level: string; message: string }[] = [];
    const logger = {
      error: (_: Record<string, unknown>, message: string) => void lines.push({ level: 'error', message }),
      warn: (_: Record<string, unknown>, message: string) => void lines.push({ level: 'warn', message }),
    };
    let attempts = 0;
    let second: ChildProcess | undefined;
    const watch = watchEmbeddedPostgres({
      dataDir,
      logger,
      checkMs: 20,
      firstBackoffMs: 10,
      maxBackoffMs: 20,
      restart: async () => {
        attempts++;
        if (attempts < 4) throw new Error('pre-existing shared memory block is still in use');
        second = await fakePostmaster(dataDir);
      },
    });
    cleanups.push(() => watch.stop());
    // While the server lives, nothing happens.
    await new Promise((r) => setTimeout(r, 100));
    expect(attempts).toBe(0);
    first.kill('SIGKILL');
    await waitFor(() => lines.some((l) => l.level === 'warn'), { what: 'the restart' });
    expect(lines.map((l) => l.message)).toEqual([
      `embedded PostgreSQL server (pid ${first.pid}) is gone; restarting it`,
      'could not restart the embedded PostgreSQL server (attempt 1); trying again in 10 ms',
      'could not restart the embedded PostgreSQL server (attempt 2); trying again in 20 ms',
      'could not restart the embedded PostgreSQL server (attempt 3); trying again in 20 ms',
      expect.stringMatching(
        new RegExp(
          `^embedded PostgreSQL server restarted \\(pid ${second!.pid}, attempt 4, \\d+ ms after it was found gone\\)$`,
        ),
      ),
    ]);
    // Stopped, it no longer restarts anything.
    await watch.stop();
    second!.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    expect(attempts).toBe(4);
  });
});
