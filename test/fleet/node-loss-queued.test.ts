/**
 * A node lost while runs wait for it (issue #16 items 3–4): runs routed to it, or queued there
 * for a slot, can start on no other node, so the live node that declares it lost ends them
 * `interrupted · node_lost` with their outcome — unless another live process has its name.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { reconcileLostNodes } from '../../src/fleet/node-loss.js';
import { NodeRegistry } from '../../src/fleet/nodes.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { NewRunRow, QueuedLaunchJson } from '../../src/store/schema.js';
import { useTestDatabase } from '../support/database.js';

const database = useTestDatabase();

function routedTo(node: string): NewRunRow & { id: RunId; node: string; launch: QueuedLaunchJson } {
  const id = newRunId();
  return {
    id,
    vendor: 'codex',
    status: 'queued',
    task: 'fix the test',
    cwd: '/srv/app',
    worktreeRoot: `${node}:/srv/app`,
    options: { timeoutMinutes: 30, progress: false },
    origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10', node: 'alpha' },
    supervisor: 'alphahost:1',
    node,
    launch: { prompt: 'fix the test', timeoutMs: 60_000, route: { target: '/srv/app', worktree: false } },
    createdAt: new Date(),
  } as NewRunRow & { id: RunId; node: string; launch: QueuedLaunchJson };
}

const staleNode = (name: string, instance: string) =>
  database.db.execute(
    sql`insert into nodes (instance, name, host, pid, roots, started_at, heartbeat_at) values (${instance}, ${name}, 'otherhost', 4242, '["/srv"]'::jsonb, now() - interval '1 hour', now() - interval '1 hour')`,
  );
const liveNode = (name: string, instance: string) =>
  database.db.execute(
    sql`insert into nodes (instance, name, host, pid, roots, started_at, heartbeat_at) values (${instance}, ${name}, 'thirdhost', 4343, '["/srv"]'::jsonb, now(), now() + interval '1 hour')`,
  );

describe('runs waiting for a lost node', () => {
  it('end interrupted · node_lost with an outcome naming the node; not while a live process has its name', async () => {
    const logger = silentLogger();
    const store = new RunStore(database.db);
    await staleNode('gamma', 'otherhost:4242:dead');
    await staleNode('delta', 'otherhost:4242:dead2');
    await liveNode('delta', 'thirdhost:4343:live');
    const forGamma = routedTo('gamma');
    const forDelta = routedTo('delta');
    for (const run of [forGamma, forDelta])
      await store.launches.createRoutedRun(
        run,
        { runId: run.id, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: 'sent' },
        5,
        new Date(),
      );
    const registry = new NodeRegistry({
      db: database.db,
      name: 'alpha',
      roots: [],
      heartbeatMs: 50,
      deadAfterMs: 200,
      logger,
    });
    await registry.start();
    try {
      await sleep(400); // past deadAfter + heartbeat since this registry started
      const written = await reconcileLostNodes({ registry, store, clock: systemClock, logger, vendors: new Map() });
      expect(written.map((d) => d.runId)).toEqual([forGamma.id]);
      expect(written[0]!.body).toMatch(new RegExp(`^\\[run ${forGamma.id}\\] interrupted · codex · gamma:/srv/app · `));
      expect(written[0]!.body).toContain('Node gamma (otherhost) stopped answering');
      expect(written[0]!.body).toContain('Reason: node_lost');
      expect(await store.runs.getRun(forGamma.id)).toMatchObject({
        status: 'interrupted',
        reason: 'node_lost',
        launch: null,
      });
      expect((await store.runs.getRun(forDelta.id))?.status).toBe('queued');
    } finally {
      await registry.stop();
    }
  });
});
