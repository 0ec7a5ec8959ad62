/**
 * Node identity in a fleet: routing goes by `[node] name`, and two live processes with one name
 * split the routed runs between them (half went to the impostor). A second live process with a
 * taken name is refused at start with the fix; a restart of the same node (its previous process
 * gone, its heartbeat still fresh) is not, and takes over that process's queued runs; and a run
 * routed to a node is addressed to one start of it, so only that process claims it.
 */
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { NodeRegistry } from '../../src/fleet/nodes.js';
import { routeLaunch } from '../../src/fleet/route.js';
import { RunStore, type NewDelivery } from '../../src/store/runs-repo.js';
import { nodes, runs, type NewRunRow, type QueuedLaunchJson } from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const logger = silentLogger();
const now = new Date('2026-12-01T08:00:00.000Z');
const database = useTestDatabase();
let store: RunStore;

beforeAll(async () => {
  store = new RunStore(database.db);
});

function registry(name: string, host: string, pid: number, live: (pid: number) => boolean = () => true): NodeRegistry {
  return new NodeRegistry({
    db: database.db,
    name,
    roots: ['/srv/app'],
    heartbeatMs: 60_000,
    deadAfterMs: 20_000,
    logger,
    host,
    pid,
    isLocalBaton: live,
  });
}

function routedTo(
  node: string,
  instance: string | null,
): NewRunRow & { id: RunId; node: string; launch: QueuedLaunchJson } {
  const launch: QueuedLaunchJson = {
    prompt: 'fix it',
    timeoutMs: 60_000,
    route: { target: '/srv/app', worktree: false },
  };
  return {
    id: newRunId(),
    vendor: 'codex',
    status: 'queued',
    task: 'fix it',
    cwd: '/srv/app',
    worktreeRoot: `${node}:/srv/app:${Math.random()}`,
    options: { timeoutMinutes: 1, progress: false },
    origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10', node: 'alpha' },
    supervisor: 'alphahost:1',
    node,
    nodeInstance: instance,
    launch,
    createdAt: now,
  };
}

function started(runId: RunId): NewDelivery {
  return { runId, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: `[run ${runId}] sent` };
}

describe(`node identity (${testEngine})`, () => {
  it('refuses a second live node with a taken name, with the fix; lets the name go once that node is silent', async () => {
    const real = registry('gamma', 'gammahost', 100);
    await real.start();
    const impostor = registry('gamma', 'otherhost', 200);
    await expect(impostor.start()).rejects.toMatchObject({
      code: 'node_name_taken',
      message: expect.stringMatching(/gammahost \(pid 100\).*\[node\] name = "otherhost"/s),
    });
    // Same host, another live baton (a second home on one machine): refused too.
    await expect(registry('gamma', 'gammahost', 300).start()).rejects.toMatchObject({ code: 'node_name_taken' });
    expect((await database.db.select().from(nodes).where(eq(nodes.name, 'gamma'))).map((n) => n.instance)).toEqual([
      real.instance,
    ]);
    // Silent past dead_after_seconds: that node is gone, and the name is free.
    await database.db.execute(
      sql`update nodes set heartbeat_at = now() - interval '60 seconds' where instance = ${real.instance}`,
    );
    const next = registry('gamma', 'otherhost', 201);
    await next.start();
    await next.stop();
    await real.stop();
  });

  it('lets a restarted node start while its killed process still looks alive, and hands it that process’s queued runs', async () => {
    const killed = registry('delta', 'deltahost', 400);
    await killed.start();
    const waiting = routedTo('delta', killed.instance);
    await store.launches.createRoutedRun(waiting, started(waiting.id), 5, now);
    // pid 400 is no baton any more; its row's heartbeat is still fresh.
    const restarted = registry('delta', 'deltahost', 401, (pid) => pid !== 400);
    await restarted.start();
    const [row] = await database.db
      .select({ nodeInstance: runs.nodeInstance })
      .from(runs)
      .where(eq(runs.id, waiting.id));
    expect(row?.nodeInstance).toBe(restarted.instance);
    expect((await store.queue.routedRuns('delta', restarted.instance)).map((r) => r.id)).toEqual([waiting.id]);
    await store.queue.cancelQueued(waiting.id, 'owner_cancel', started(waiting.id), now);
    await restarted.stop();
    await killed.stop();
  });

  it('a run routed to one start of a node is claimed by that process only, and by the next one once it is gone', async () => {
    const real = registry('omega', 'omegahost', 500);
    await real.start();
    // A process that took the same name anyway (started before names were checked, or by hand).
    const impostorInstance = 'elsewhere:600:abcd';
    await database.db.insert(nodes).values({
      instance: impostorInstance,
      name: 'omega',
      host: 'elsewhere',
      pid: 600,
      roots: ['/srv/app'],
      startedAt: now,
      heartbeatAt: sql`now()` as unknown as Date,
    });
    // The launch is addressed to the newest live start of the name.
    const list = await real.list();
    const route = routeLaunch('omega:/srv/app', { self: 'alpha', roots: [], projects: new Map(), nodes: list });
    expect(route).toMatchObject({ kind: 'remote', node: 'omega', instance: real.instance });
    const run = routedTo('omega', real.instance);
    await store.launches.createRoutedRun(run, started(run.id), 5, now);

    expect(await store.queue.routedRuns('omega', impostorInstance)).toEqual([]);
    expect(await store.queue.hasQueuedFor('omega', impostorInstance)).toBe(false);
    expect((await store.queue.routedRuns('omega', real.instance)).map((r) => r.id)).toEqual([run.id]);
    expect(
      await store.queue.placeRouted(run.id, {
        cwd: '/srv/app',
        worktreeRoot: '/srv/app/omega',
        branch: null,
        sourceRoot: null,
      }),
    ).toBe(true);
    expect(await store.queue.claimQueued(5, 'elsewhere:600', 'omega', impostorInstance)).toEqual([]);

    // The addressed process stops before it claims: the next process of the name takes it over.
    await real.stop();
    const claimed = await store.queue.claimQueued(5, 'omegahost:501', 'omega', 'omegahost:501:next');
    expect(claimed.map((r) => r.id)).toEqual([run.id]);
    await store.runs.finishRun(run.id, { status: 'completed', reason: null, endedAt: now }, started(run.id), now);
    await database.db.delete(nodes).where(eq(nodes.instance, impostorInstance));
  });
});
