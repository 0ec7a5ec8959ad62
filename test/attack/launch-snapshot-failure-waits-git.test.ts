/**
 * Attack on the launch snapshot begun in the launch transaction: a run whose CLI never spawns
 * (vendor missing, task too long, stopped before its spawn, the spawn refused) waited for the
 * begun snapshot's git before its failure was reported, only to delete the index it made. In a
 * huge or hostile repository that git runs up to its time limit (120 s per command), so the
 * owner's failure report, a Stop's answer and the service's shutdown waited that long for a
 * snapshot nothing uses. Before the change such a run never waited for git at all.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { SNAPSHOT_FILES } from '../../src/harness/diff.js';
import { createHarness, insertRun, type TestHarness } from '../support/harness.js';
import { holdingGit, type HoldingGit } from '../support/fake-git.js';
import { testEngine } from '../support/db.js';

let h: TestHarness;
let git: HoldingGit;

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  const dir = join((await import('node:os')).tmpdir(), `baton-attack-snapshot-wait-${process.pid}`);
  await mkdir(dir, { recursive: true });
  git = holdingGit(dir);
  h = await createHarness();
});
afterAll(async () => {
  await rm(git.hold, { force: true });
  git?.restore();
  await h?.dispose();
});

describe(`a run that never spawns does not wait for its begun snapshot (${testEngine})`, () => {
  it('reports the failure while the snapshot\'s git still runs, and removes the index once it ended', async () => {
    const cwd = join(h.root, 'repo');
    await mkdir(cwd, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd, env: { PATH: git.realPath } });
    await writeFile(join(cwd, 'a.txt'), 'a\n');
    const run = await insertRun(h, cwd);
    const runId = run.id as RunId;
    await writeFile(git.hold, '');
    try {
      h.supervisor.beginLaunchSnapshot(runId, cwd);
      // claude is not installed in this harness: vendor_missing before any spawn.
      h.supervisor.start({ ...run, vendor: 'claude' }, { prompt: 'p' }, 60_000);
      await waitFor(async () => (await h.store.getRun(runId))?.status === 'failed', 'the failure to be recorded while git is held', 30_000);
      // Recorded while the snapshot's add still waits: it has not ended.
      expect(readFileSync(git.log, 'utf8').split('\n').some((line) => line.startsWith('done ') && line.includes('add -A'))).toBe(false);
    } finally {
      await rm(git.hold, { force: true });
    }
    await h.supervisor.idle();
    await waitFor(() => !existsSync(join(h.runsDir, runId, SNAPSHOT_FILES.start)), 'the begun snapshot\'s index to go', 10_000);
    expect(existsSync(join(h.runsDir, runId, SNAPSHOT_FILES.start))).toBe(false);
  }, 60_000);
});
