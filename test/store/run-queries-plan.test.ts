/**
 * The launch transaction's read and a run end's queue check stay index lookups as the runs table
 * grows (issue #15). Both read the active and queued runs; before `runs_status` no index covered
 * `queued`, so each launch (under the launch lock) and each run's end scanned every run ever made:
 * 9 ms at 50,000 runs on the bench machine. Checked under a cached generic plan of the prepared
 * statement (forced here), which PostgreSQL may switch to after five executions.
 *
 * PostgreSQL server only (plans of a real server at scale); skipped on PGlite.
 */
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../src/core/ids.js';
import type { Db } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { testEngine } from '../support/database.js';
import { genericPlan, openCapturingDatabase, type CapturedQuery } from '../support/generic-plan.js';

/** Ended runs in the table when the plans are taken: enough that a scan costs far more than the index. */
const ROWS = 100_000;

describe.skipIf(testEngine !== 'postgres')('run queries on a long history, PostgreSQL', () => {
  let opened: Awaited<ReturnType<typeof openCapturingDatabase>>;
  let client: postgres.Sql;
  let captured: CapturedQuery[];
  let db: Db;

  beforeAll(async () => {
    opened = await openCapturingDatabase();
    ({ client, captured, db } = opened);
    await client.unsafe(
      `insert into runs (id, vendor, status, task, cwd, worktree_root, options, origin, supervisor, created_at)
       select 'hr_old' || g, 'codex', 'completed', 'task', '/r', '/r', '{"timeoutMinutes":30}'::jsonb,
              '{"platform":"telegram","chatId":"1","senderId":"1","messageId":"1"}'::jsonb, 'host:1:x', now() - make_interval(secs => g)
       from generate_series(1, $1::int) g`,
      [ROWS],
    );
    await client.unsafe('analyze runs');
  }, 300_000);
  afterAll(async () => {
    await opened?.close();
  });

  it(`reads the active and queued runs through an index at ${ROWS} ended runs, under a generic plan`, async () => {
    const store = new RunStore(db);
    const now = new Date();
    const id = newRunId();
    captured.length = 0;
    await store.launches.createRun(
      {
        id,
        vendor: 'codex',
        status: 'starting',
        task: 't',
        cwd: '/new',
        worktreeRoot: '/new',
        options: { timeoutMinutes: 30, progress: false },
        origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '2' },
        supervisor: 'host:1:x',
        createdAt: now,
      },
      { runId: id, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: 'started' },
      4,
      now,
    );
    expect(await store.queue.hasQueued()).toBe(false);
    expect(await store.queue.claimQueued(4, 'host:1:x')).toEqual([]);
    const reads = captured.filter((c) => /^select/i.test(c.query) && /from "runs"/.test(c.query));
    // createRun's read, hasQueued, and claimQueued's two reads.
    expect(reads.length).toBeGreaterThanOrEqual(4);
    for (const read of reads) {
      const { indexes, seqScans, plan } = await genericPlan(client, read);
      expect(seqScans, `${read.query}\n${JSON.stringify(plan)}`).toEqual([]);
      expect(
        indexes.some((name) => name === 'runs_status' || name === 'runs_active'),
        read.query,
      ).toBe(true);
    }
  }, 300_000);
});
