/**
 * Attacks on the launch snapshot begun in the launch transaction, with a git whose `add -A` is
 * held (a huge or hostile repository keeps git running up to its time limit, 120 s a command).
 *
 * 1. A run whose CLI never spawns (vendor missing, task too long, stopped before its spawn, the
 *    spawn refused) waited for the begun snapshot's git before its failure was reported, only to
 *    delete the index it made: the owner's failure report, a Stop's answer and the service's
 *    shutdown waited that long for a snapshot nothing uses. Before the change such a run never
 *    waited for git at all.
 * 2. A launch whose transaction failed after the snapshot began (duplicate_inbound here) had its
 *    run directory removed only once the snapshot's git ended, in the background, which nothing at
 *    shutdown waits for. A service stopped meanwhile left the run directory, with the launch's
 *    attachments and a partial index, of a run that does not exist. Before the change the launch
 *    removed it before it answered.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { SNAPSHOT_FILES } from '../../src/harness/diff.js';
import { answerInboundElsewhere, createHarness, inbound, insertRun, type TestHarness } from '../support/harness.js';
import { holdingGit, type HoldingGit } from '../support/fake-git.js';
import { testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

let h: TestHarness;
let git: HoldingGit;

/** A repository `name` under the harness root with one file, made with the real git (unseen by the log). */
async function repository(name: string): Promise<string> {
  const cwd = join(h.root, name);
  await mkdir(cwd, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd, env: { PATH: git.realPath } });
  await writeFile(join(cwd, 'a.txt'), 'a\n');
  return cwd;
}

beforeAll(async () => {
  const dir = join((await import('node:os')).tmpdir(), `baton-attack-snapshot-held-${process.pid}`);
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
  it("reports the failure while the snapshot's git still runs, and removes the index once it ended", async () => {
    const cwd = await repository('repo-never-spawned');
    const run = await insertRun(h, cwd);
    const runId = run.id as RunId;
    await writeFile(git.hold, '');
    try {
      h.supervisor.beginLaunchSnapshot(runId, cwd);
      // claude is not installed in this harness: vendor_missing before any spawn.
      h.supervisor.start({ ...run, vendor: 'claude' }, { prompt: 'p' }, 60_000);
      await waitFor(async () => (await h.store.runs.getRun(runId))?.status === 'failed', {
        timeoutMs: 30_000,
        what: 'the failure to be recorded while git is held',
      });
      // Recorded while the snapshot's add still waits (or has not even started): it has not ended.
      const ended =
        existsSync(git.log) &&
        readFileSync(git.log, 'utf8')
          .split('\n')
          .some((line) => line.startsWith('done ') && line.includes('add -A'));
      expect(ended).toBe(false);
    } finally {
      await rm(git.hold, { force: true });
    }
    await h.supervisor.idle();
    await waitFor(() => !existsSync(join(h.runsDir, runId, SNAPSHOT_FILES.start)), {
      timeoutMs: 10_000,
      what: "the begun snapshot's index to go",
    });
    expect(existsSync(join(h.runsDir, runId, SNAPSHOT_FILES.start))).toBe(false);
  }, 60_000);
});

// Last: it shuts the harness's supervisor down.
describe(`a launch that was not created leaves no run directory at shutdown (${testEngine})`, () => {
  it("removes the run directory before the launch answers, while the snapshot's git still runs", async () => {
    const cwd = await repository('repo-not-created');
    // Another process answered the same event meanwhile: the transaction fails after its read.
    const undo = answerInboundElsewhere(h);
    const ids: RunId[] = [];
    const begin = h.supervisor.beginLaunchSnapshot.bind(h.supervisor);
    h.supervisor.beginLaunchSnapshot = (runId: RunId, at: string) => {
      ids.push(runId);
      begin(runId, at);
    };
    await writeFile(git.hold, '');
    try {
      const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} success`));
      expect(result.kind).toBe('duplicate');
      expect(ids).toHaveLength(1);
      // The service stops once the snapshot's git add runs (held).
      const addStarted = (): boolean =>
        existsSync(git.log) &&
        readFileSync(git.log, 'utf8')
          .split('\n')
          .some((line) => line.startsWith('git ') && line.includes('add -A'));
      for (let i = 0; i < 500 && !addStarted(); i++) await new Promise((r) => setTimeout(r, 20));
      expect(addStarted()).toBe(true);
      await h.supervisor.shutdown();
      expect(existsSync(join(h.runsDir, ids[0]!))).toBe(false);
    } finally {
      undo();
      h.supervisor.beginLaunchSnapshot = begin;
      await rm(git.hold, { force: true });
    }
    // Nothing comes back once git ended.
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(join(h.runsDir, ids[0]!))).toBe(false);
  }, 30_000);
});
