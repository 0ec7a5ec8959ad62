/**
 * A vendor's plan limit as the runs record it, and the queue honouring a run's `not_before`:
 * the reset and the release are judged by the clock handed in, here a manual one.
 */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { RunStore } from '../../../src/store/runs-repo.js';
import { runs, type QueuedLaunchJson } from '../../../src/store/schema.js';
import { ManualClock } from '../../support/clock.js';
import { testEngine, useTestDatabase } from '../../support/database.js';
import { runRow, startedDelivery } from '../../support/rows.js';

const RESET = new Date('2026-12-04T07:00:00.000Z');
const LAUNCH: QueuedLaunchJson = { prompt: 'fix the test', timeoutMs: 60_000 };

describe(`plan limits and not_before on ${testEngine}`, () => {
  const database = useTestDatabase({ per: 'test' });

  /** A codex run on node `n1` that ended at `endedAt`, as `status` / `reason`. */
  async function endedRun(endedAt: Date, reason: string | null, quotaResetsAt: Date | null, node = 'n1') {
    const row = runRow({
      status: reason ? 'failed' : 'completed',
      reason,
      node,
      quotaResetsAt,
      endedAt,
      createdAt: new Date(endedAt.getTime() - 60_000),
    });
    await database.db.insert(runs).values(row);
    return row;
  }

  it('knows a vendor exhausted until its reset, on its node only, and not after a later completed run', async () => {
    const store = new RunStore(database.db);
    const clock = new ManualClock('2026-12-04T05:00:00.000Z');
    const exhausted = await endedRun(clock.now(), 'quota_exhausted', RESET);
    expect(await store.quota.exhaustedUntil('codex', 'n1', clock.now())).toEqual({
      resetsAt: RESET,
      runId: exhausted.id,
    });
    // Another vendor, another node: not exhausted.
    expect(await store.quota.exhaustedUntil('claude', 'n1', clock.now())).toBeUndefined();
    expect(await store.quota.exhaustedUntil('codex', 'n2', clock.now())).toBeUndefined();
    // Past the reset: not exhausted any more.
    clock.set(Date.parse('2026-12-04T07:00:01.000Z'));
    expect(await store.quota.exhaustedUntil('codex', 'n1', clock.now())).toBeUndefined();
    // Before the reset again, but a run of codex on n1 completed after the limit: it was lifted.
    clock.set(Date.parse('2026-12-04T06:00:00.000Z'));
    await endedRun(new Date('2026-12-04T05:30:00.000Z'), null, null);
    expect(await store.quota.exhaustedUntil('codex', 'n1', clock.now())).toBeUndefined();
  });

  it('a run without a reset time does not make its vendor known exhausted', async () => {
    const store = new RunStore(database.db);
    await endedRun(new Date('2026-12-04T05:00:00.000Z'), 'quota_exhausted', null);
    expect(await store.quota.exhaustedUntil('codex', 'n1', new Date('2026-12-04T05:00:01.000Z'))).toBeUndefined();
  });

  it('queues a run with not_before whatever the slots, and claims it only from that time', async () => {
    const store = new RunStore(database.db);
    const clock = new ManualClock('2026-12-04T05:00:00.000Z');
    const run = runRow({ node: 'n1', createdAt: clock.now() });
    const created = await store.launches.createRun(
      run,
      (place) => ({ ...startedDelivery(run.id), body: place?.notBefore ? 'waits for the reset' : 'started' }),
      { node: 5 },
      clock.now(),
      undefined,
      { maxQueued: 5, launch: LAUNCH, notBefore: RESET },
    );
    // Nothing is active: without not_before it would have started.
    expect(created.queued).toEqual({ behind: 'an active run', ahead: 0, notBefore: RESET });
    expect(created.body).toBe('waits for the reset');
    expect(created.run).toMatchObject({ status: 'queued', notBefore: RESET });
    // A later run for the same worktree is not held behind it: the waiting one holds no place yet.
    const later = runRow({ node: 'n1', createdAt: new Date(clock.nowMs() + 1000) });
    const startedNow = await store.launches.createRun(later, startedDelivery(later.id), { node: 5 }, clock.now());
    expect(startedNow.queued).toBeUndefined();
    await database.db.update(runs).set({ status: 'completed', endedAt: clock.now() }).where(eq(runs.id, later.id));

    clock.set(Date.parse('2026-12-04T06:59:59.000Z'));
    expect(await store.queue.claimQueued({ node: 5 }, 'testhost:1', 'n1', undefined, undefined, clock.now())).toEqual(
      [],
    );
    clock.set(Date.parse('2026-12-04T07:00:00.000Z'));
    const claimed = await store.queue.claimQueued({ node: 5 }, 'testhost:1', 'n1', undefined, undefined, clock.now());
    expect(claimed.map((r) => [r.id, r.status])).toEqual([[run.id, 'starting']]);
  });
});
