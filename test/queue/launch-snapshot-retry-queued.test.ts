/**
 * Attack on the launch snapshot begun in the launch transaction: the store runs a launch
 * transaction again when a prepared statement went stale ("cached plan must not change result
 * type", a migration by another process). Its first try had found the worktree free and begun
 * the snapshot; another launch took the worktree while it rolled back, so the second try queued
 * the run ([harness] queue, the default). The begun snapshot stayed behind for the queued run, and
 * when that run started later, after the other run had written in the worktree, its diff was
 * taken against the stale snapshot: the other run's writes were reported as this run's.
 *
 * PostgreSQL server only (prepared statements, a second connection).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { LAUNCH_LOCK_KEY, RunStore } from '../../src/store/runs-repo.js';
import { createPostgresDatabase, testEngine } from '../support/database.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

describe.skipIf(testEngine !== 'postgres')('a launch transaction run again after its snapshot began', () => {
  let created: { url: string; drop(): Promise<void> };
  let h: TestHarness;
  let other: Database;
  let control: postgres.Sql;
  let watcher: postgres.Sql;
  beforeAll(async () => {
    created = await createPostgresDatabase(process.env.DATABASE_URL!);
    // One connection: the launch's transaction meets the statement it prepared earlier.
    await (await openDatabase({ url: created.url, maxConnections: 2 })).close();
    const database = await openDatabase({ url: created.url, maxConnections: 1, migrate: false });
    h = await createHarness({ database: { ...database, url: created.url, dispose: () => database.close() } });
    other = await openDatabase({ url: created.url, maxConnections: 1, migrate: false });
    control = postgres(created.url, { max: 1, onnotice: () => {} });
    watcher = postgres(created.url, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await h?.dispose();
    await h?.database.close().catch(() => {});
    await other?.close();
    await control?.end();
    await watcher?.end();
    await created?.drop();
  });

  it("does not keep the first try's snapshot for a run the second try queued", async () => {
    const repo = async (name: string): Promise<string> => {
      const cwd = join(h.root, name);
      await mkdir(cwd, { recursive: true });
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd });
      git('init', '-q');
      await writeFile(join(cwd, 'kept.txt'), 'kept\n');
      git('add', '-A');
      git('commit', '-qm', 'start');
      return cwd;
    };
    // A first launch prepares the transaction's statements on the one connection.
    const first = await h.dispatcher.handle(inbound('1', `/codex in:${await repo('warm')} success`));
    expect(first.kind).toBe('launched');
    await h.supervisor.idle();

    const cwd = await repo('contended');
    const message = inbound('1', `/codex in:${cwd} write-file made-by-run.txt`);
    const rival = newRunId();
    let holder: Promise<unknown> | undefined;
    let release: () => void = () => {};
    const createRun = h.store.launches.createRun.bind(h.store);
    // Before the launch transaction: another connection holds the launch's inbound event, so the
    // transaction's writes wait after its read found the worktree free (and the snapshot began).
    h.store.launches.createRun = (async (...args: Parameters<typeof createRun>) => {
      const locked = new Promise<void>((resolveLocked) => {
        holder = control
          .begin(async (tx) => {
            await tx`select 1 from inbound_events where dedupe_key = ${message.dedupeKey} for update`;
            resolveLocked();
            await new Promise<void>((r) => (release = r));
            throw new Error('roll back');
          })
          .catch(() => {});
      });
      await locked;
      return createRun(...args);
    }) as typeof createRun;
    const begin = h.supervisor.beginLaunchSnapshot.bind(h.supervisor);
    let began = 0;
    let rivalCreated: Promise<unknown> | undefined;
    h.supervisor.beginLaunchSnapshot = (runId: RunId, at: string) => {
      began++;
      begin(runId, at);
      if (began > 1) return;
      void (async () => {
        // Another launch for the same worktree waits for the launch lock…
        const now = new Date();
        rivalCreated = new RunStore(other.db).launches.createRun(
          {
            id: rival,
            vendor: 'codex',
            status: 'starting',
            task: 't',
            cwd,
            worktreeRoot: cwd,
            options: { timeoutMinutes: 1, progress: false },
            origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '77' },
            supervisor: 'elsewhere:1',
            createdAt: now,
          },
          {
            runId: rival,
            kind: 'started',
            target: { platform: 'telegram', chatId: '1' },
            body: `[run ${rival}] started`,
          },
          10,
          now,
        );
        await waitFor(
          async () =>
            (
              await watcher`select 1 from pg_locks where locktype = 'advisory' and not granted and objid = ${LAUNCH_LOCK_KEY}`
            ).length > 0,
          { timeoutMs: 20_000, what: 'the rival to wait for the lock' },
        );
        // …a migration by another process widens a column the launch's insert returns…
        const migrator = postgres(created.url, { max: 1, onnotice: () => {} });
        await migrator.unsafe('alter table deliveries alter column attempts type bigint');
        await migrator.end();
        // …and the inbound event is let go: the insert fails stale, the transaction runs again.
        release();
      })();
    };
    let launched;
    try {
      launched = await h.dispatcher.handle(message);
    } finally {
      h.store.launches.createRun = createRun;
      h.supervisor.beginLaunchSnapshot = begin;
    }
    await holder;
    await rivalCreated;
    if (launched.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const runId = launched.runId;
    expect(began).toBe(1);
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'queued' });

    // The rival run writes in the worktree, then ends; the queued run starts after it.
    await writeFile(join(cwd, 'written-by-rival.txt'), 'rival\n');
    await control`update runs set status = 'completed', ended_at = now() where id = ${rival}`;
    await h.dispatcher.startQueued();
    await waitFor(async () => (await h.store.runs.getRun(runId))?.status === 'completed', {
      timeoutMs: 20_000,
      what: 'the queued run to complete',
    });
    await h.supervisor.idle();
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    expect(outcome.text).toMatch(/made-by-run\.txt/);
    expect(outcome.text).not.toMatch(/written-by-rival\.txt/);
  }, 60_000);
});
