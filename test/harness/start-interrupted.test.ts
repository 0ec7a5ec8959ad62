/**
 * A run whose start is cut short because its process is stopping (its database may already be
 * closing) is recorded as what happened — interrupted by the shutdown — not as a spawn failure
 * worded by whatever broke under it. The real store, the fake codex.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, insertRun } from '../support/harness.js';

describe('a start cut short by shutdown', () => {
  it('ends interrupted · shutdown', async () => {
    const h = await createHarness();
    try {
      // A working directory that is a file makes the start throw (ENOTDIR) — here while the
      // supervisor is already stopping.
      const cwd = join(h.root, 'not-a-directory');
      writeFileSync(cwd, 'a file\n');
      const run = await insertRun(h, cwd);
      await h.supervisor.shutdown();
      h.supervisor.start(run, { prompt: 'success' }, 60_000);
      await h.supervisor.idle();
      expect(await h.store.runs.getRun(run.id)).toMatchObject({ status: 'interrupted', reason: 'shutdown' });
    } finally {
      await h.dispose();
    }
  });
});
