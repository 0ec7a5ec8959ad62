/**
 * Attack: node's spawn throws, instead of emitting 'error', for some failures (ENOTDIR for a
 * working directory that is a file). The run's events.jsonl spool is opened just before the
 * spawn, and its error handler resumes the child's output: a spool that then fails (here its
 * path is a directory) must not reach for a child that was never made — that was an uncaught
 * ReferenceError in an event listener, which kills the service. The run must end failed,
 * spawn_failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, insertRun } from '../support/harness.js';

describe('a spawn that throws', () => {
  it('fails the run spawn_failed, and a failing spool then is only logged', async () => {
    const h = await createHarness();
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const cwd = join(h.root, 'not-a-directory');
      writeFileSync(cwd, 'a file where the checkout was\n');
      const run = await insertRun(h, cwd);
      const runId = run.id;
      // The spool's path is a directory: opening it fails (EISDIR) after the spawn threw.
      mkdirSync(join(h.runsDir, runId, 'events.jsonl'), { recursive: true });
      h.supervisor.start(run, { prompt: 'success' }, 60_000);
      await h.supervisor.idle();
      expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'failed', reason: 'spawn_failed' });
      // Give a late spool error its turn.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await h.dispose();
    }
  });
});
