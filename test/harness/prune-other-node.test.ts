/**
 * Attack: in a fleet (one database, several hosts) every node's worktree retention (at start and
 * every sweep) and `baton worktrees prune` walked the worktrees of every node's runs. A worktree
 * on gamma does not exist on alpha, so alpha recorded it "already gone" (removed by hand): gamma
 * never listed or pruned it again, and it stayed on gamma's disk for good. A node handles the
 * worktrees of its own runs only.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { listWorktrees, pruneWorktrees } from '../../src/harness/worktrees.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { runs, type NewRunRow } from '../../src/store/schema.js';
import { useTestDatabase } from '../support/database.js';

const database = useTestDatabase();

describe('worktree retention in a fleet', () => {
  it("leaves another node's worktrees to that node", async () => {
    const store = new RunStore(database.db);
    const id = newRunId();
    const onGamma = {
      id,
      vendor: 'codex',
      status: 'completed',
      task: 'fix the test',
      cwd: `/home/g/.baton/worktrees/app/${id}`,
      worktreeRoot: `/home/g/.baton/worktrees/app/${id}`,
      branch: `baton/${id}`,
      sourceRoot: '/home/g/code/app',
      options: { timeoutMinutes: 30, progress: false },
      origin: { platform: 'slack', chatId: 'C1', senderId: 'U1', messageId: '1.2', node: 'alpha' },
      supervisor: 'gammahost:200',
      node: 'gamma',
      createdAt: new Date(),
      endedAt: new Date(),
    } as unknown as NewRunRow & { id: RunId };
    await database.db.insert(runs).values(onGamma);
    const self = { name: 'alpha', host: hostname() };
    expect((await listWorktrees(store, self)).map((w) => w.runId)).not.toContain(id);
    const actions = await pruneWorktrees({
      store,
      clock: systemClock,
      logger: silentLogger(),
      retentionMs: 86_400_000,
      node: self,
    });
    expect(actions.map((a) => a.runId)).not.toContain(id);
    expect((await store.runs.getRun(id))?.worktreeRemovedAt).toBeNull();
  });
});
