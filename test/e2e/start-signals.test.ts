/**
 * A stop signal while `baton start` is still starting. It used to end the process at once (no
 * handler was installed until start-up returned, even for a SIGTERM just after `baton ready` was
 * printed), leaving whatever start-up had launched without its service. Before the database is
 * open baton exits at once; after it, start-up finishes and the service stops as it does later.
 */
import { execa } from 'execa';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startService } from '../support/service.js';
import { SERVICE_NODE_FLAGS } from '../../src/cli/service.js';
import { startTcpProxy } from '../fakes/tcp-proxy.js';
import { CLI } from '../support/cli.js';
import { makeTestHome, type TestHome } from '../support/home.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `baton start` with `env`; resolves the first time `pattern` is in its output. */
function spawnStart(env: Record<string, string>) {
  // forceKillAfterDelay off: execa would SIGKILL 5 s after the SIGTERM, before a slow start-up ends.
  const child = execa(process.execPath, [...SERVICE_NODE_FLAGS, CLI, 'start'], {
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    buffer: false,
    cleanup: true,
    forceKillAfterDelay: false,
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await child;
  });
  const seen = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (pattern.test(out)) resolve();
      };
      child.stdout?.on('data', check);
      child.stderr?.on('data', check);
      void child.then(() =>
        pattern.test(out) ? resolve() : reject(new Error(`baton exited before ${pattern}:\n${out}`)),
      );
      check();
    });
  return { child, seen, output: () => out };
}

async function home(): Promise<TestHome> {
  const h = await makeTestHome('baton-start-signals-', [inject('codexBinDir'), inject('claudeBinDir')]);
  cleanups.push(() => h.dispose());
  return h;
}

describe('a stop signal while baton starts', () => {
  it('exits at once, with status 0, while it still waits for the database', async () => {
    const h = await home();
    // A port nothing listens on: start-up waits for the database, one line per attempt.
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const start = spawnStart({ ...h.env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test` });
    await start.seen(/Cannot reach PostgreSQL/);
    start.child.kill('SIGTERM');
    const result = await start.child;
    expect(result.signal).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(start.output()).toContain('SIGTERM received before the database was open; exiting');
  });

  it('finishes start-up, then stops as a running service does, when the signal comes after the database opened', async () => {
    const h = await home();
    // A Bot API that holds getMe: start-up waits there, with the database open.
    const held: ServerResponse[] = [];
    let heard: () => void = () => undefined;
    const getMeHeld = new Promise<void>((resolve) => (heard = resolve));
    const api: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
      held.push(res);
      if (req.url?.includes('/getMe')) heard();
    });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    cleanups.push(
      () =>
        new Promise((r) => {
          api.closeAllConnections();
          api.close(r);
        }),
    );
    const start = spawnStart({
      ...h.env,
      TELEGRAM_BOT_TOKEN: '123456:held-token',
      TELEGRAM_API_ROOT: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    });
    await getMeHeld;
    start.child.kill('SIGTERM');
    await start.seen(/SIGTERM received while starting; stopping once start-up has finished/);
    expect(start.child.exitCode).toBeNull(); // still starting, not ended by the signal
    // The held call fails: Telegram is reported and retried in the background, start-up ends.
    for (const res of held) res.destroy();
    const result = await start.child;
    expect(result.signal).toBeUndefined();
    expect(result.exitCode).toBe(0);
    const out = start.output();
    expect(out).toContain('baton ready');
    expect(out.indexOf('SIGTERM received, stopping')).toBeGreaterThan(out.indexOf('baton ready'));
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'exits instead of starting again when start-up lost its database after the signal',
    async () => {
      const h = await home();
      const directUrl = h.env.DATABASE_URL!;
      // The schema first, so the trap meets start-up's own statement, not a migration.
      await (await startService(h.env)).stop();
      const server = new URL(directUrl);
      const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
      cleanups.push(() => proxy.close());
      // The connection carrying the reconcile (the database is open: phase "starting") is cut.
      const sprung = proxy.closeWhenClientSends('starts_with("runs"."supervisor"');
      const start = spawnStart({ ...h.env, DATABASE_URL: proxy.rewrite(directUrl) });
      await sprung;
      start.child.kill('SIGTERM'); // lands before the next attempt, which waits 1 s after a loss
      const result = await start.child;
      expect(result.exitCode).toBe(0);
      const out = start.output();
      expect(out).toContain('SIGTERM was received while starting; exiting instead of starting again');
      expect(out).not.toContain('baton ready');
    },
  );

  it('lets the embedded database start, then stops it with the service, when the signal comes before it is open', async () => {
    const h = await home();
    const { DATABASE_URL: _external, ...env } = h.env; // the embedded database: a server baton starts
    const start = spawnStart(env);
    await start.seen(/starting \(embedded database\)/);
    start.child.kill('SIGTERM');
    const result = await start.child;
    expect(result.exitCode).toBe(0);
    const out = start.output();
    expect(out).toContain('SIGTERM received while starting; stopping once start-up has finished');
    expect(out.indexOf('SIGTERM received, stopping')).toBeGreaterThan(out.indexOf('baton ready'));
    // No process of this home is left (an embedded PostgreSQL server runs from inside it).
    const left: string[] = [];
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.includes(h.batonHome)) left.push(cmdline.split('\0').join(' '));
    }
    expect(left).toEqual([]);
  });
});
