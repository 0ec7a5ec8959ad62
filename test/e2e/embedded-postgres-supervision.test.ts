/**
 * The embedded PostgreSQL server under a running service (README "Embedded database"): killed
 * with SIGKILL, as the OOM killer does, the service notices, restarts it and answers again; a
 * left-over server stopped with SIGSTOP makes `baton start` say what is wrong instead of hanging.
 * The service runs as the current user (root included: the server then runs as baton-postgres),
 * always on the embedded default, whatever DATABASE_URL the suite has.
 */
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLI } from '../support/cli.js';
import { OWNER, WAIT_MS, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir')],
    adjustEnv: (env) => {
      const { DATABASE_URL: _unused, ...embedded } = env;
      return embedded;
    },
  });
});
afterAll(async () => {
  await world?.dispose();
});

/** The postmaster's pid from its pid file, when that pid is a live (not zombie) process. */
async function postmaster(): Promise<number | undefined> {
  const text = await readFile(join(world.batonHome, 'postgres', 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number(text?.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
    ? pid
    : undefined;
}

async function healthReady(): Promise<number> {
  const state = JSON.parse(await readFile(join(world.batonHome, 'service.json'), 'utf8')) as { port: number };
  return (await fetch(`http://127.0.0.1:${state.port}/health/ready`, { signal: AbortSignal.timeout(10_000) })).status;
}

describe('the embedded PostgreSQL server, supervised', { timeout: 6 * WAIT_MS }, () => {
  it('is restarted when it is killed under the service, and a message sent meanwhile is answered', async () => {
    const { telegram, service } = world;
    expect(service.stdout()).toContain('embedded PostgreSQL');
    const first = await postmaster();
    expect(first).toBeDefined();
    await waitFor(async () => (await healthReady()) === 200, {
      timeoutMs: WAIT_MS,
      what: 'the service to be ready',
      intervalMs: 100,
    });

    process.kill(first!, 'SIGKILL');
    telegram.pushUpdate(world.privateMessage(OWNER, '/runs', 501));
    await waitFor(
      async () => {
        const now = await postmaster();
        return now !== undefined && now !== first;
      },
      { timeoutMs: WAIT_MS, what: 'a new postmaster', intervalMs: 100 },
    );
    const logs = (): string => service.stdout() + service.stderr();
    await waitFor(() => /embedded PostgreSQL server .*restarted/.test(logs()), {
      timeoutMs: WAIT_MS,
      what: 'the restart to be logged',
      intervalMs: 100,
    });
    expect(logs()).toMatch(/embedded PostgreSQL server \(pid \d+\) is gone/);
    await telegram.waitForSent(
      (m) => (m.reply_parameters as { message_id?: number } | undefined)?.message_id === 501,
      WAIT_MS,
    );
    await waitFor(async () => (await healthReady()) === 200, {
      timeoutMs: WAIT_MS,
      what: 'health to be ready again',
      intervalMs: 100,
    });
    expect(service.exitCode()).toBeUndefined();
    // The commands beside the service reach the restarted server.
    const runs = await execa(process.execPath, [CLI, 'runs'], {
      env: world.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    expect(runs.exitCode).toBe(0);
  });

  it('makes `baton start` say that a left-over server is stopped (SIGSTOP) and what to do, instead of hanging', async () => {
    if ((await postmaster()) === undefined) await world.crashAndRestart();
    const pid = await postmaster();
    expect(pid).toBeDefined();
    // A crash of the service leaves its server running; then the server is stopped.
    await world.service.kill();
    process.kill(pid!, 'SIGSTOP');
    try {
      const start = await execa(process.execPath, [CLI, 'start'], {
        env: world.env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        timeout: 5 * WAIT_MS,
      });
      expect(start.timedOut).toBe(false);
      expect(start.exitCode).not.toBe(0);
      const out = start.stdout + start.stderr;
      expect(out).toContain(`pid ${pid!}`);
      expect(out).toMatch(/is stopped/);
      expect(out).toContain(`kill -CONT ${pid!}`);
    } finally {
      process.kill(pid!, 'SIGCONT');
    }
    // Resumed, the same server serves the next start.
    await world.crashAndRestart();
    expect(await postmaster()).toBe(pid);
  });
});
