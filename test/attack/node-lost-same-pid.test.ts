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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { reconcileLostNodes } from '../../src/fleet/node-loss.js';
import { NodeRegistry } from '../../src/fleet/nodes.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { NewRunRow } from '../../src/store/schema.js';
import { openTestDatabase, type TestDatabase } from '../support/db.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database?.dispose());

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
    const run = {
      id: runId,
      vendor: 'codex',
      status: 'running',
      task: 'fix the test',
      cwd: '/repo/app',
      worktreeRoot: '/repo/app',
      options: { timeoutMinutes: 30, progress: false },
      origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10' },
      supervisor: `${host}:${process.pid}`,
      createdAt: now,
    } as NewRunRow & { id: RunId };
    await store.launches.createRun(
      run,
      { runId, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: 'started' },
      5,
      now,
    );
    await sleep(400); // past deadAfter + heartbeat since this registry started
    await reconcileLostNodes({ registry, store, clock: systemClock, logger, vendors: new Map() });
    await registry.stop();
    expect((await store.runs.getRun(runId))?.status).toBe('running');
  });
});
