/**
 * Attack: in a fleet (one DATABASE_URL, several hosts) a run queued on node A (its cwd, its
 * worktree and its attachments are on host A) is claimed by ANY node's `startQueued` — every
 * node calls it from its reconcile timer each minute — because `claimQueued` takes the oldest
 * queued rows with no regard to the host that queued them. Node B then spawns the CLI on host B
 * in a directory that does not exist there, or is a different checkout under the same path.
 */
import { describe, expect, it } from 'vitest';
import { RunStore } from '../../src/store/runs-repo.js';
import { runs } from '../../src/store/schema.js';
import { useTestDatabase } from '../support/database.js';
import { runRow } from '../support/rows.js';

const database = useTestDatabase();

describe('claimQueued in a fleet', () => {
  it("does not hand host A's queued run to a process on host B", async () => {
    const store = new RunStore(database.db);
    const row = runRow({
      status: 'queued',
      cwd: '/home/alice/code/app',
      origin: { platform: 'slack', chatId: 'C1', senderId: 'U1', messageId: '1.2' },
      supervisor: 'host-a:100',
      launch: { prompt: 'fix the test', timeoutMs: 1_800_000 },
    });
    const id = row.id;
    await database.db.insert(runs).values(row);
    const claimed = await store.queue.claimQueued(5, 'host-b:200');
    expect(claimed.map((r) => r.id)).toEqual([]);
    expect((await store.runs.getRun(id))?.status).toBe('queued');
  });
});
