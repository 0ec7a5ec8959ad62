/**
 * Attack: a restarted service whose pid equals its crashed predecessor's (a container's pid 1,
 * `docker restart` keeps the hostname) declares the predecessor's stale `nodes` row lost and
 * ends its OWN live runs `interrupted · node_lost`: reconcileLostNodes looks runs up by
 * `host:pid` (the supervisor id), which both process lives share. The startup reconcile already
 * handles "an earlier process had our pid" for runs; node loss does not.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { reconcileLostNodes } from '../../src/fleet/node-loss.js';
import { NodeRegistry } from '../../src/fleet/nodes.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { useTestDatabase } from '../support/database.js';
import { createRunRow } from '../support/rows.js';

const database = useTestDatabase();

describe('node loss after a restart under the same pid', () => {
  it("does not end the new process's live runs", async () => {
    const logger = silentLogger();
    const store = new RunStore(database.db);
    const host = hostname();
    // The crashed predecessor: same host, same pid, its row never removed, heartbeat long stale.
    await database.db.execute(
      sql`insert into nodes (instance, name, host, pid, roots, started_at, heartbeat_at) values (${`${host}:${process.pid}:deadbeef`}, 'alpha', ${host}, ${process.pid}, '[]'::jsonb, now() - interval '1 hour', now() - interval '1 hour')`,
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
    // A run this (new) process supervises right now.
    const runId = newRunId();
    const now = new Date();
    await createRunRow(
      store,
      { id: runId, status: 'running', supervisor: `${host}:${process.pid}` },
      { now, started: { body: 'started' } },
    );
    await sleep(400); // past deadAfter + heartbeat since this registry started
    await reconcileLostNodes({ registry, store, clock: systemClock, logger, vendors: new Map() });
    await registry.stop();
    expect((await store.runs.getRun(runId))?.status).toBe('running');
  });
});
