import { beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { RunStore, type NewDelivery } from '../../src/store/runs-repo.js';
import type { NewRunRow } from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { runRow, startedDelivery, type TestRunRow } from '../support/rows.js';

const now = new Date('2026-11-29T08:00:00.123Z');

/** A run launched at `now`; the rest are {@link runRow}'s defaults. */
const newRun = (overrides: Partial<NewRunRow> = {}): TestRunRow => runRow({ createdAt: now, ...overrides });

function started(runId: RunId): NewDelivery {
  return startedDelivery(runId, { target: { platform: 'telegram', chatId: '1', replyToMessageId: '10' } });
}

describe(`RunStore on ${testEngine}`, () => {
  const database = useTestDatabase();
  let store: RunStore;

  beforeAll(async () => {
    store = new RunStore(database.db);
  });

  it('records an inbound event once', async () => {
    expect(await store.inbox.recordInbound('telegram', 'u-1', now)).toBe(true);
    expect(await store.inbox.recordInbound('telegram', 'u-1', now)).toBe(false);
    expect(await store.inbox.recordInbound('slack', 'u-1', now)).toBe(true);
  });

  it("inbox: a stored update is claimed once, a dead claimant's claim is released, a launch marks it handled", async () => {
    await store.inbox.recordInbox('telegram', [
      { dedupeKey: 'ib-1', receivedAt: now, payload: { update_id: 1 } },
      { dedupeKey: 'ib-2', receivedAt: now, payload: { update_id: 2 } },
      { dedupeKey: 'ib-3', receivedAt: now, payload: { update_id: 3 } },
    ]);
    // Stored again (a poll repeated after a failed write): nothing changes.
    await store.inbox.recordInbox('telegram', [{ dedupeKey: 'ib-1', receivedAt: now, payload: { update_id: 1 } }]);
    expect((await store.inbox.receivedInbound('telegram')).map((e) => e.dedupeKey).sort()).toEqual([
      'ib-1',
      'ib-2',
      'ib-3',
    ]);

    expect(await store.inbox.recordInbound('telegram', 'ib-1', now, 'host-a:100')).toBe(true);
    expect(await store.inbox.recordInbound('telegram', 'ib-1', now, 'host-a:200')).toBe(false);
    await store.inbox.forgetInbound('telegram', 'ib-3');
    expect((await store.inbox.receivedInbound('telegram')).map((e) => e.dedupeKey)).toEqual(['ib-2']);

    // host-a:100 died before answering ib-1: its claim goes back to the inbox; live claims stay.
    expect(await store.inbox.recordInbound('telegram', 'ib-2', now, 'host-a:300')).toBe(true);
    expect(await store.inbox.releaseInboundClaims('host-a:', (claimant) => claimant === 'host-a:100')).toBe(1);
    expect((await store.inbox.receivedInbound('telegram')).map((e) => e.dedupeKey)).toEqual(['ib-1']);
    expect(await store.inbox.recordInbound('telegram', 'ib-1', now, 'host-a:400')).toBe(true);

    // A launch marks its event handled in the run's transaction: a replay can't launch again.
    const run = newRun({ worktreeRoot: '/repo/inbox', cwd: '/repo/inbox' });
    await store.launches.createRun(run, started(run.id), 5, now, { platform: 'telegram', dedupeKey: 'ib-1' });
    expect(await store.inbox.releaseInboundClaims('host-a:', () => true)).toBe(1); // only ib-2 was still claimed
    expect(await store.inbox.recordInbound('telegram', 'ib-1', now, 'host-a:500')).toBe(false);
    const again = newRun({ worktreeRoot: '/repo/inbox-again', cwd: '/repo/inbox-again' });
    await expect(
      store.launches.createRun(again, started(again.id), 5, now, { platform: 'telegram', dedupeKey: 'ib-1' }),
    ).rejects.toMatchObject({ code: 'duplicate_inbound' });
    expect(await store.runs.getRun(again.id)).toBeUndefined();
    expect(await store.inbox.receivedInbound('telegram')).toEqual([
      { dedupeKey: 'ib-2', receivedAt: now, payload: { update_id: 2 } },
    ]);
  });

  it('writes a run and its started message together, and round-trips timestamps', async () => {
    const run = newRun({ worktreeRoot: '/repo/rt', cwd: '/repo/rt' });
    const delivery = await store.launches.createRun(run, started(run.id), 5, now);
    expect(delivery).toMatchObject({ runId: run.id, kind: 'started', status: 'pending', attempts: 0 });
    const stored = await store.runs.getRun(run.id);
    expect(stored?.status).toBe('starting');
    expect(stored?.createdAt.toISOString()).toBe(now.toISOString());
    expect(stored?.origin).toEqual(run.origin);
  });

  it('returns the committed run row with its started message, so a launch needs no read before the spawn (issue #15)', async () => {
    const run = newRun({ worktreeRoot: '/repo/returning', cwd: '/repo/returning' });
    const created = await store.launches.createRun(run, started(run.id), 5, now);
    expect(created.run).toEqual(await store.runs.getRun(run.id));
    expect(created.run.status).toBe('starting');
  });

  it('refuses a second active run in the same worktree root', async () => {
    const first = newRun({ worktreeRoot: '/repo/busy' });
    await store.launches.createRun(first, started(first.id), 5, now);
    const second = newRun({ worktreeRoot: '/repo/busy' });
    await expect(store.launches.createRun(second, started(second.id), 5, now)).rejects.toMatchObject({
      code: 'worktree_busy',
    });
    expect(await store.runs.getRun(second.id)).toBeUndefined();
    expect(await store.outbox.deliveriesOfRun(second.id)).toEqual([]);
  });

  it('enforces the one-active-run index even for a direct insert that skips the count', async () => {
    const first = newRun({ worktreeRoot: '/repo/index' });
    await store.launches.createRun(first, started(first.id), 5, now);
    const { runs } = await import('../../src/store/schema.js');
    await expect(database.db.insert(runs).values(newRun({ worktreeRoot: '/repo/index' }))).rejects.toThrow();
  });

  it('refuses past max_active', async () => {
    const active = (await store.runs.recentRuns(100)).filter(
      (r) => r.status === 'starting' || r.status === 'running',
    ).length;
    const run = newRun({ worktreeRoot: '/repo/max' });
    await expect(store.launches.createRun(run, started(run.id), active, now)).rejects.toMatchObject({
      code: 'max_active',
    });
  });

  it('finishes a run with its outcome in one transaction, once', async () => {
    const run = newRun({ worktreeRoot: '/repo/finish' });
    await store.launches.createRun(run, started(run.id), 50, now);
    await store.runs.markRunning(run.id, 4242, now);
    const outcome: NewDelivery = { ...started(run.id), kind: 'outcome', body: `[run ${run.id}] completed` };
    const terminal = {
      status: 'completed' as const,
      reason: null,
      finalMessage: 'done',
      endedAt: now,
      exitCode: 0,
      vendorSessionId: 'thread-1',
    };
    const row = await store.runs.finishRun(run.id, terminal, outcome, now);
    expect(row?.kind).toBe('outcome');
    expect(await store.runs.finishRun(run.id, terminal, outcome, now)).toBeNull();
    const stored = await store.runs.getRun(run.id);
    expect(stored).toMatchObject({ status: 'completed', pid: 4242, finalMessage: 'done', vendorSessionId: 'thread-1' });
    expect((await store.outbox.deliveriesOfRun(run.id)).map((d) => d.kind)).toEqual(['started', 'outcome']);
    // The worktree is free again.
    const next = newRun({ worktreeRoot: '/repo/finish' });
    await expect(store.launches.createRun(next, started(next.id), 50, now)).resolves.toBeTruthy();
  });

  it('tracks sent parts and maps platform message ids back to the run', async () => {
    const run = newRun({ worktreeRoot: '/repo/parts' });
    const delivery = await store.launches.createRun(run, started(run.id), 50, now);
    await store.outbox.recordPartsSent(delivery, 1, ['501'], false, now);
    await store.outbox.recordPartsSent(delivery, 2, ['502'], true, now);
    const stored = await store.outbox.getDelivery(delivery.id);
    expect(stored).toMatchObject({ status: 'delivered', partsDelivered: 2, platformMessageIds: ['501', '502'] });
    expect((await store.runs.findRunByMessage('telegram', '1', '502'))?.id).toBe(run.id);
    expect(await store.runs.findRunByMessage('telegram', '2', '502')).toBeUndefined();
  });

  it('counts failed attempts and dead-letters', async () => {
    const row = await store.outbox.enqueue(
      { runId: null, kind: 'reply', target: { platform: 'telegram', chatId: '9' }, body: 'hi' },
      now,
    );
    const later = new Date(now.getTime() + 30_000);
    await store.outbox.recordAttemptFailed(row.id, 'HTTP 500', later, false);
    await store.outbox.recordAttemptFailed(row.id, 'HTTP 500', later, true);
    expect(await store.outbox.getDelivery(row.id)).toMatchObject({
      attempts: 2,
      status: 'dead',
      lastError: 'HTTP 500',
    });
  });
});
