/**
 * The embedded database's lock (issue #10 item 8), through `baton start` on PGlite: a stale lock
 * whose pid now belongs to an unrelated process (after a crash or a reboot) is taken over, while
 * a live baton holding the data directory still refuses a second one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLI } from '../support/cli.js';
import { makeTestHome, type TestHome } from '../support/home.js';
import { startService } from '../support/service.js';

let home: TestHome;
let env: Record<string, string>;
let stranger: ChildProcess;

beforeAll(async () => {
  home = await makeTestHome('baton-lock-', [inject('codexBinDir'), inject('claudeBinDir')]);
  env = { ...home.env };
  delete env.DATABASE_URL; // this is about the embedded database
  // …on PGlite, which every user (root too) now gets only for a home that already holds a PGlite
  // database: an existing pgdata/ keeps it, as for a home from an older baton.
  await mkdir(join(home.batonHome, 'pgdata'));
  stranger = spawn('sleep', ['600'], { stdio: 'ignore' });
});
afterAll(async () => {
  stranger?.kill('SIGKILL');
  await home?.dispose();
});

const lockPath = (): string => join(home.batonHome, 'pgdata.lock');

describe('PGlite lock', () => {
  it.each([
    ['a bare pid (a lock from before start tokens)', (pid: number) => String(pid)],
    [
      "a pid whose start token is another process's",
      (pid: number) => JSON.stringify({ pid, token: 'another-boot:12345' }),
    ],
  ])(
    'takes over a stale lock holding %s of an unrelated live process',
    async (_, content) => {
      await writeFile(lockPath(), content(stranger.pid!));
      const service = await startService(env);
      try {
        expect(service.stdout()).toContain('baton ready');
        expect(service.stdout()).toContain('embedded PGlite');
      } finally {
        await service.stop();
      }
    },
    120_000,
  );

  it('still refuses while a live baton holds the data directory', async () => {
    const first = await startService(env);
    try {
      const second = await execa(process.execPath, [CLI, 'start'], {
        env,
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      });
      expect(second.exitCode).not.toBe(0);
      // The home's service lock refuses it first, before the data directory is opened.
      expect(`${second.stdout}\n${second.stderr}`).toContain(`baton is already running on this home (`);
      expect(`${second.stdout}\n${second.stderr}`).toContain(`pid ${first.pid}`);
    } finally {
      await first.stop();
    }
  }, 120_000);
});
