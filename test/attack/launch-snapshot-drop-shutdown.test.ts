/**
 * Attack on the launch snapshot begun in the launch transaction: a launch whose transaction failed
 * after the snapshot began (duplicate_inbound here) had its run directory removed only once the
 * snapshot's git ended, in the background, which nothing at shutdown waits for. A service stopped
 * meanwhile (git held by a huge or hostile repository, up to its 120 s limit) left the run
 * directory, with the launch's attachments and a partial index, of a run that does not exist.
 * Before the change the launch removed it before it answered.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { answerInboundElsewhere, createHarness, inbound, type TestHarness } from '../support/harness.js';
import { holdingGit, type HoldingGit } from '../support/fake-git.js';
import { testEngine } from '../support/db.js';

let h: TestHarness;
let git: HoldingGit;

beforeAll(async () => {
  const dir = join((await import('node:os')).tmpdir(), `baton-attack-snapshot-drop-${process.pid}`);
  await mkdir(dir, { recursive: true });
  git = holdingGit(dir);
  h = await createHarness();
});
afterAll(async () => {
  await rm(git.hold, { force: true });
  git?.restore();
  await h?.dispose();
});

describe(`a launch that was not created leaves no run directory at shutdown (${testEngine})`, () => {
  it('removes the run directory before the launch answers, while the snapshot\'s git still runs', async () => {
    const cwd = join(h.root, 'repo');
    await mkdir(cwd, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd, env: { PATH: git.realPath } });
    await writeFile(join(cwd, 'a.txt'), 'a\n');
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
      const addStarted = (): boolean => existsSync(git.log) && readFileSync(git.log, 'utf8').split('\n').some((line) => line.startsWith('git ') && line.includes('add -A'));
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
