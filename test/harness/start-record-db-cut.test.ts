/**
 * Attack: the database connection closes just as the supervisor records a spawned CLI as
 * running. The CLI was left working (changing the checkout) while its run was recorded as a
 * spawn failure worded by the driver, or, with the database gone, stayed `starting` with no pid
 * for anything to stop. Real PostgreSQL behind a TCP proxy that cuts the statement itself.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { reconcileOrphanedRuns } from '../../src/harness/reconcile.js';
import { TERMINAL_FILE } from '../../src/harness/terminal-write.js';
import { outcomeText } from '../../src/wording/runs.js';
import { harnessWords } from '../../src/wording/harness.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { createHarness, insertRun, type TestHarness } from '../support/harness.js';

/** Drizzle's text of `RunStore.markRunning`'s statement, as it goes over the wire. */
const MARK_RUNNING_SQL = 'set "status" = $1, "pid" = $2';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

describe.skipIf(!process.env.DATABASE_URL)('a database cut as a spawned run is recorded running', () => {
  let proxy: TcpProxy;
  let h: TestHarness;
  let pids: number[];
  beforeEach(async () => {
    const server = new URL(process.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    h = await createHarness({ rewriteDatabaseUrl: (url) => proxy.rewrite(url) });
    pids = [];
    // The CLI's pid, as the supervisor hands it to the store.
    const markRunning = h.store.runs.markRunning.bind(h.store);
    h.store.runs.markRunning = (id, pid, at) => {
      if (pid !== null) pids.push(pid);
      return markRunning(id, pid, at);
    };
  }, 60_000);
  afterEach(async () => {
    // Whatever the code under test left running.
    for (const pid of pids) if (alive(pid)) process.kill(-pid, 'SIGKILL');
    proxy.accept();
    await h?.dispose();
    await proxy?.close();
  });

  it("stops the CLI and records failed · start_unrecorded, not the driver's words", async () => {
    const app = join(h.root, 'app');
    await mkdir(app);
    const run = await insertRun(h, app);
    const cut = proxy.closeWhenClientSends(MARK_RUNNING_SQL);
    h.supervisor.start(run, { prompt: `keep-writing ${join(app, 'out.txt')}` }, 60_000);
    await cut;
    await h.supervisor.idle();
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(false);
    const row = await h.store.runs.getRun(run.id);
    expect(row).toMatchObject({ status: 'failed', reason: 'start_unrecorded' });
    expect(row?.errorMessage).not.toMatch(/update|runs|CONNECTION|ECONN/i);
  }, 60_000);

  it('with the database gone, stops the CLI and the next start records the end the supervisor kept', async () => {
    const app = join(h.root, 'app');
    await mkdir(app);
    const run = await insertRun(h, app);
    // From the statement on, no connection reaches the server.
    const cut = proxy.closeWhenClientSends(MARK_RUNNING_SQL).then(() => {
      proxy.refuse();
      proxy.cut();
    });
    h.supervisor.start(run, { prompt: `keep-writing ${join(app, 'out.txt')}` }, 60_000);
    await cut;
    // The supervisor keeps the end on disk while it retries the database.
    const terminal = join(h.runsDir, run.id, TERMINAL_FILE);
    while (!existsSync(terminal)) await sleep(50);
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(false);
    // The service stops (its retries end), the database comes back, and the next start reconciles.
    await h.supervisor.shutdown();
    proxy.accept();
    expect(await h.store.runs.getRun(run.id)).toMatchObject({ status: 'starting', pid: null });
    await reconcileOrphanedRuns({
      store: h.store,
      clock: systemClock,
      logger: silentLogger(),
      vendors: new Map(),
      host: hostname(),
      isAlive: () => false,
      isSupervisedHere: () => false,
      startup: true,
      killGraceMs: 300,
      runsDir: h.runsDir,
      describeOutcome: outcomeText,
      words: harnessWords,
    });
    expect(await h.store.runs.getRun(run.id)).toMatchObject({ status: 'failed', reason: 'start_unrecorded' });
  }, 60_000);
});
