/**
 * recordPartsSent under load (issue #15): the retry worker's lanes record their sent rows
 * concurrently, and the rows recorded while one write is in flight go together in one statement
 * (group commit), each row with its own result; one row the server refuses fails alone.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import type { Db } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import type { DeliveryRow } from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { openCapturingDatabase } from '../support/generic-plan.js';
import { insertCompletedRun } from '../support/rows.js';

const now = new Date('2026-12-01T08:00:00.000Z');

/** A completed run with `count` pending deliveries, in order. */
async function runWithDeliveries(db: Db, count: number): Promise<{ runId: RunId; rows: DeliveryRow[] }> {
  const runId = await insertCompletedRun(db, '7', now);
  const rows = await db
    .insert(schema.deliveries)
    .values(
      Array.from({ length: count }, (_, i) => ({
        runId,
        kind: i === 0 ? 'outcome' : 'reply',
        target: { platform: 'telegram', chatId: '7' },
        body: `b${i}`,
        nextAttemptAt: now,
        createdAt: now,
      })),
    )
    .returning();
  return { runId, rows };
}

describe(`recordPartsSent group commit on ${testEngine}`, () => {
  const database = useTestDatabase();
  let store: RunStore;

  beforeAll(async () => {
    store = new RunStore(database.db);
  });

  it('records concurrent rows each with its own parts, message ids, links and later-pending answer', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runWithDeliveries(database.db, i % 2 === 0 ? 2 : 1)),
    );
    const results = await Promise.all(
      runs.map(({ rows }, i) => store.outbox.recordPartsSent(rows[0]!, 2, [`m${i}a`, `m${i}b`], i !== 7, now)),
    );
    // Runs with a second pending row answer true once their first row is done; row 7 is not done.
    expect(results.map((r) => r.laterPendingInRun)).toEqual([true, false, true, false, true, false, true, false]);
    for (const [i, { runId, rows }] of runs.entries()) {
      const stored = await store.outbox.getDelivery(rows[0]!.id);
      expect(stored).toMatchObject({
        partsDelivered: 2,
        platformMessageIds: [`m${i}a`, `m${i}b`],
        status: i === 7 ? 'pending' : 'delivered',
      });
      expect(stored?.deliveredAt?.toISOString() ?? null).toBe(i === 7 ? null : now.toISOString());
      expect((await store.runs.findRunByMessage('telegram', '7', `m${i}b`))?.id).toBe(runId);
      if (rows[1]) expect((await store.outbox.getDelivery(rows[1].id))?.status).toBe('pending');
    }
  });

  it('appends to the message ids already recorded, part by part', async () => {
    const { rows } = await runWithDeliveries(database.db, 1);
    await store.outbox.recordPartsSent(rows[0]!, 1, ['p1'], false, now);
    await Promise.all([
      store.outbox.recordPartsSent(rows[0]!, 2, ['p2'], true, now),
      store.outbox.recordPartsSent((await runWithDeliveries(database.db, 1)).rows[0]!, 1, ['q1'], true, now),
    ]);
    expect(await store.outbox.getDelivery(rows[0]!.id)).toMatchObject({
      partsDelivered: 2,
      platformMessageIds: ['p1', 'p2'],
      status: 'delivered',
    });
  });

  it('fails only the row the server refuses when rows went together', async () => {
    const good = await Promise.all([1, 2, 3].map(() => runWithDeliveries(database.db, 1)));
    const doomed = await runWithDeliveries(database.db, 1);
    // The run is deleted under its delivery (retention): linking a message to it breaks run_messages' foreign key.
    await database.db.execute(sql`delete from runs where id = ${doomed.runId}`);
    const settled = await Promise.allSettled([
      store.outbox.recordPartsSent(good[0]!.rows[0]!, 1, ['g0'], true, now),
      store.outbox.recordPartsSent(good[1]!.rows[0]!, 1, ['g1'], true, now),
      store.outbox.recordPartsSent(doomed.rows[0]!, 1, ['d0'], true, now),
      store.outbox.recordPartsSent(good[2]!.rows[0]!, 1, ['g2'], true, now),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    for (const [i, { rows }] of good.entries())
      expect(await store.outbox.getDelivery(rows[0]!.id)).toMatchObject({
        status: 'delivered',
        platformMessageIds: [`g${i}`],
      });
    expect(await store.outbox.getDelivery(doomed.rows[0]!.id)).toMatchObject({
      status: 'pending',
      platformMessageIds: [],
    });
  });
});

describe.skipIf(testEngine !== 'postgres')('recordPartsSent statements on PostgreSQL', () => {
  let opened: Awaited<ReturnType<typeof openCapturingDatabase>>;

  beforeAll(async () => {
    opened = await openCapturingDatabase();
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
  });

  it('sends the rows recorded while one write is in flight as one statement', async () => {
    const store = new RunStore(opened.db);
    const runs = await Promise.all(Array.from({ length: 8 }, () => runWithDeliveries(opened.db, 1)));
    opened.captured.length = 0;
    await Promise.all(runs.map(({ rows }, i) => store.outbox.recordPartsSent(rows[0]!, 1, [`s${i}`], true, now)));
    const writes = opened.captured.filter((c) => /update deliveries/i.test(c.query));
    // The first row goes alone at once; the seven recorded meanwhile go together (one row each before).
    expect(writes).toHaveLength(2);
  });
});
