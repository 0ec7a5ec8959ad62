/**
 * The store side of routing a launch to another node (issue #16 item 3): a routed run is written
 * `queued` for its node and wakes it with NOTIFY; only that node claims it, and only once it
 * prepared it; `max_active` counts the node's own active runs; the worktree lock stays global.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { RunStore, RUNS_CHANNEL, type NewDelivery } from '../../src/store/runs-repo.js';
import type { NewRunRow, QueuedLaunchJson } from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { runRow, startedDelivery, type TestRunRow } from '../support/rows.js';

const now = new Date('2026-12-01T08:00:00.000Z');
const LAUNCH: QueuedLaunchJson = { prompt: 'fix the test', timeoutMs: 60_000 };

/** A run launched on node alpha at `now`; the rest are {@link runRow}'s defaults. */
function newRun(overrides: Partial<NewRunRow> = {}): TestRunRow {
  return runRow({
    origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10', node: 'alpha' },
    supervisor: 'alphahost:1',
    createdAt: now,
    ...overrides,
  });
}

function started(runId: RunId): NewDelivery {
  return startedDelivery(runId, {
    target: { platform: 'telegram', chatId: '1', replyToMessageId: '10' },
    body: `[run ${runId}] sent to node gamma`,
  });
}

function done(run: { id: RunId }): NewDelivery {
  return {
    runId: run.id,
    kind: 'outcome',
    target: { platform: 'telegram', chatId: '1' },
    body: `[run ${run.id}] completed`,
  };
}

function routed(node: string, path: string, overrides: Partial<NewRunRow> = {}) {
  return newRun({
    status: 'queued',
    node,
    cwd: path,
    worktreeRoot: `${node}:${path}`,
    launch: { ...LAUNCH, route: { target: path, worktree: false } },
    ...overrides,
  }) as NewRunRow & { id: RunId; node: string; launch: QueuedLaunchJson };
}

describe(`routed runs on ${testEngine}`, () => {
  const database = useTestDatabase();
  let store: RunStore;

  beforeAll(async () => {
    store = new RunStore(database.db);
  });

  it('writes a routed run queued for its node, with its message; only that node claims it, once prepared', async () => {
    const run = routed('gamma', '/srv/gamma/app');
    await store.inbox.recordInbound('telegram', 'routed-1', now, 'alphahost:1');
    const row = await store.launches.createRoutedRun(run, started(run.id), 5, now, {
      platform: 'telegram',
      dedupeKey: 'routed-1',
    });
    expect(row.body).toContain('sent to node gamma');
    expect(await store.queue.hasQueuedFor('gamma')).toBe(true);
    expect(await store.queue.hasQueuedFor('alpha')).toBe(false);
    // Not prepared yet: nobody claims it, not even gamma.
    expect(await store.queue.claimQueued(5, 'gammahost:7', 'gamma')).toEqual([]);
    expect((await store.queue.routedRuns('gamma')).map((r) => r.id)).toEqual([run.id]);
    expect(
      await store.queue.placeRouted(run.id, {
        cwd: '/srv/gamma/app',
        worktreeRoot: '/srv/gamma/app',
        branch: null,
        sourceRoot: null,
      }),
    ).toBe(true);
    expect(await store.queue.routedRuns('gamma')).toEqual([]);
    // alpha (another node, even on the host that wrote it) never takes it.
    expect(await store.queue.claimQueued(5, 'alphahost:1', 'alpha')).toEqual([]);
    const claimed = await store.queue.claimQueued(5, 'gammahost:7', 'gamma');
    expect(claimed.map((r) => [r.id, r.status, r.supervisor, r.node])).toEqual([
      [run.id, 'starting', 'gammahost:7', 'gamma'],
    ]);
    expect(claimed[0]!.launch).toEqual(LAUNCH);
    // The same inbound event never writes a second run.
    const again = routed('gamma', '/srv/gamma/app');
    await expect(
      store.launches.createRoutedRun(again, started(again.id), 5, now, { platform: 'telegram', dedupeKey: 'routed-1' }),
    ).rejects.toMatchObject({ code: 'duplicate_inbound' });
    await store.runs.finishRun(run.id, { status: 'completed', reason: null, endedAt: now }, done(run), now);
  });

  it("max_active counts the node's own runs; the worktree lock holds across nodes", async () => {
    // Two runs active on alpha do not take gamma's one slot.
    const alphaRuns = [
      newRun({ node: 'alpha', worktreeRoot: '/a/1', cwd: '/a/1' }),
      newRun({ node: 'alpha', worktreeRoot: '/a/2', cwd: '/a/2' }),
    ];
    for (const r of alphaRuns) await store.launches.createRun(r, started(r.id), 2, now);
    const first = routed('gamma', '/srv/gamma/one');
    const second = routed('gamma', '/srv/gamma/two');
    for (const r of [first, second]) {
      await store.launches.createRoutedRun(r, started(r.id), 5, now);
      await store.queue.placeRouted(r.id, { cwd: r.cwd, worktreeRoot: r.cwd, branch: null, sourceRoot: null });
    }
    expect((await store.queue.claimQueued(1, 'gammahost:7', 'gamma')).map((r) => r.id)).toEqual([first.id]);
    expect(await store.queue.claimQueued(1, 'gammahost:7', 'gamma')).toEqual([]);
    expect((await store.runs.getRun(second.id))?.status).toBe('queued');
    // alpha, full at 2, still refuses its own third run.
    const third = newRun({ node: 'alpha', worktreeRoot: '/a/3', cwd: '/a/3' });
    await expect(store.launches.createRun(third, started(third.id), 2, now)).rejects.toMatchObject({
      code: 'max_active',
    });
    // A queued run for a worktree another node's run holds waits for it.
    const sameRoot = routed('gamma', '/a/1');
    await store.launches.createRoutedRun(sameRoot, started(sameRoot.id), 5, now);
    await store.queue.placeRouted(sameRoot.id, { cwd: '/a/1', worktreeRoot: '/a/1', branch: null, sourceRoot: null });
    await store.runs.finishRun(first.id, { status: 'completed', reason: null, endedAt: now }, done(first), now);
    expect((await store.queue.claimQueued(5, 'gammahost:7', 'gamma')).map((r) => r.id)).toEqual([second.id]);
    for (const r of [...alphaRuns, second])
      await store.runs.finishRun(r.id, { status: 'completed', reason: null, endedAt: now }, done(r), now);
    expect((await store.queue.claimQueued(5, 'gammahost:7', 'gamma')).map((r) => r.id)).toEqual([sameRoot.id]);
    await store.runs.finishRun(sameRoot.id, { status: 'completed', reason: null, endedAt: now }, done(sameRoot), now);
  });

  it('[node] fleet_max_active caps the active runs of all nodes together', async () => {
    const onAlpha = newRun({ node: 'alpha', worktreeRoot: '/f/1', cwd: '/f/1' });
    await store.launches.createRun(onAlpha, started(onAlpha.id), { node: 5, fleet: 2 }, now);
    const routedRun = routed('gamma', '/f/2');
    await store.launches.createRoutedRun(routedRun, started(routedRun.id), 5, now);
    await store.queue.placeRouted(routedRun.id, { cwd: '/f/2', worktreeRoot: '/f/2', branch: null, sourceRoot: null });
    // gamma has room for 5 of its own, but the fleet has room for one more only.
    const other = routed('gamma', '/f/3');
    await store.launches.createRoutedRun(other, started(other.id), 5, now);
    await store.queue.placeRouted(other.id, { cwd: '/f/3', worktreeRoot: '/f/3', branch: null, sourceRoot: null });
    expect((await store.queue.claimQueued({ node: 5, fleet: 2 }, 'gammahost:7', 'gamma')).map((r) => r.id)).toEqual([
      routedRun.id,
    ]);
    const third = newRun({ node: 'alpha', worktreeRoot: '/f/4', cwd: '/f/4' });
    await expect(store.launches.createRun(third, started(third.id), { node: 5, fleet: 2 }, now)).rejects.toMatchObject({
      code: 'max_active',
      details: { refusal: { code: 'max_active', scope: 'fleet', limit: 2 } },
    });
    // Without a fleet cap the same start passes.
    await store.launches.createRun(third, started(third.id), 5, now);
    for (const r of [onAlpha, routedRun, third])
      await store.runs.finishRun(r.id, { status: 'completed', reason: null, endedAt: now }, done(r), now);
    expect((await store.queue.claimQueued({ node: 5, fleet: 2 }, 'gammahost:7', 'gamma')).map((r) => r.id)).toEqual([
      other.id,
    ]);
    await store.runs.finishRun(other.id, { status: 'completed', reason: null, endedAt: now }, done(other), now);
  });

  it('a routed run the node refuses ends failed with its reason and outcome; a cancelled one is not refused again', async () => {
    const run = routed('gamma', '/etc');
    await store.launches.createRoutedRun(run, started(run.id), 5, now);
    const outcome = await store.queue.refuseQueued(
      run.id,
      'outside_workspace',
      '/etc is outside the workspace.',
      { runId: run.id, kind: 'outcome', target: { platform: 'telegram', chatId: '1' }, body: 'refused' },
      now,
    );
    expect(outcome?.body).toBe('refused');
    expect(await store.runs.getRun(run.id)).toMatchObject({
      status: 'failed',
      reason: 'outside_workspace',
      launch: null,
    });
    expect(
      await store.queue.refuseQueued(
        run.id,
        'outside_workspace',
        'x',
        { runId: run.id, kind: 'outcome', target: { platform: 'telegram', chatId: '1' }, body: 'again' },
        now,
      ),
    ).toBeNull();
    expect(
      await store.queue.placeRouted(run.id, { cwd: '/etc', worktreeRoot: '/etc', branch: null, sourceRoot: null }),
    ).toBe(false);
  });

  it.runIf(testEngine === 'postgres')('wakes the node with NOTIFY on commit', async () => {
    const payloads: string[] = [];
    const unlisten = await database.listen!(RUNS_CHANNEL, (payload) => payloads.push(payload));
    try {
      const run = routed('delta', '/srv/delta/app');
      await store.launches.createRoutedRun(run, started(run.id), 5, now);
      const end = Date.now() + 30_000;
      while (!payloads.includes('delta') && Date.now() < end) await sleep(50);
      expect(payloads).toContain('delta');
    } finally {
      await unlisten();
    }
  });
});
