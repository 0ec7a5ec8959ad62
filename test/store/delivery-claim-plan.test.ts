/**
 * The retry worker's claim query keeps its partial index under a generic plan (issue #15): the
 * status is written into the SQL as a literal, so a cached generic plan of the prepared statement
 * (what PostgreSQL switches to after five executions when it looks no worse, or always under
 * `plan_cache_mode = force_generic_plan`) can still prove `deliveries_due`'s predicate
 * `status = 'pending'`. With the status bound as a parameter, the generic plan cannot use the
 * index and scans the table.
 *
 * PostgreSQL server only (plans of a real server at scale); skipped on PGlite.
 */
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import { testEngine } from '../support/database.js';
import { genericPlan, openCapturingDatabase, type CapturedQuery } from '../support/generic-plan.js';
import { insertCompletedRun } from '../support/rows.js';

/** Rows in the table when the plan is taken: enough that a seq scan costs far more than the index. */
const ROWS = 200_000;

describe.skipIf(testEngine !== 'postgres')('delivery claim plan on PostgreSQL', () => {
  let opened: Awaited<ReturnType<typeof openCapturingDatabase>>;
  let client: postgres.Sql;
  let captured: CapturedQuery[];
  let db: Db;

  beforeAll(async () => {
    opened = await openCapturingDatabase();
    ({ client, captured, db } = opened);
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
  });

  it(`uses the partial index deliveries_due under force_generic_plan at ${ROWS} rows`, async () => {
    const now = new Date();
    const runId = await insertCompletedRun(db, '1', now);
    await db.insert(schema.deliveries).values({
      runId,
      kind: 'outcome',
      target: { platform: 'telegram', chatId: '1' },
      body: 'b',
      nextAttemptAt: new Date(now.getTime() - 1000),
      createdAt: now,
    });
    captured.length = 0;
    expect(await new RunStore(db).outbox.claimDueDeliveries(now, 50, 300_000)).toHaveLength(1);
    const claim = captured.find((c) => /for update skip locked/i.test(c.query));
    expect(claim, 'the claim SELECT was captured').toBeDefined();

    // Mostly delivered history, a few pending rows (half due), as a long-lived service has.
    await client.unsafe(
      `insert into deliveries (run_id, kind, target, body, status, attempts, next_attempt_at, created_at)
       select null, 'outcome', '{"platform":"telegram","chatId":"1"}'::jsonb, 'body',
              (case when g % 1000 = 0 then 'pending' else 'delivered' end)::delivery_status, 1,
              now() - make_interval(secs => $1 - g), now() - make_interval(secs => $1 - g)
       from generate_series(1, $1::int) g`,
      [ROWS],
    );
    await client.unsafe('analyze deliveries');

    const nodes = await genericPlan(client, claim!);
    expect(nodes.seqScans, JSON.stringify(nodes.plan)).toEqual([]);
    expect(nodes.indexes).toContain('deliveries_due');
  }, 300_000);

  // After the test above, which left ROWS rows in the table.
  it(`records sent rows (group commit) through the primary key and deliveries_run at ${ROWS} rows`, async () => {
    const now = new Date();
    const runId = await insertCompletedRun(db, '1', now);
    const rows = await db
      .insert(schema.deliveries)
      .values(
        [0, 1].map(() => ({
          runId,
          kind: 'outcome',
          target: { platform: 'telegram', chatId: '1' },
          body: 'b',
          nextAttemptAt: now,
          createdAt: now,
        })),
      )
      .returning();
    expect(Number((await client.unsafe('select count(*)::int as n from deliveries'))[0]!.n)).toBeGreaterThan(ROWS);
    captured.length = 0;
    expect(await new RunStore(db).outbox.recordPartsSent(rows[0]!, 1, ['9'], true, now)).toEqual({
      laterPendingInRun: true,
    });
    const write = captured.find((c) => /update deliveries/i.test(c.query));
    expect(write, 'the recordPartsSent statement was captured').toBeDefined();

    const nodes = await genericPlan(client, write!);
    expect(nodes.seqScans, JSON.stringify(nodes.plan)).toEqual([]);
    expect(nodes.indexes).toEqual(expect.arrayContaining(['deliveries_pkey', 'deliveries_run']));
  }, 300_000);
});
