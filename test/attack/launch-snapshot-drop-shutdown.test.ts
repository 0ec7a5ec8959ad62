/**
 * Attack on the launch snapshot begun in the launch transaction: a launch whose transaction failed
 * after the snapshot began (duplicate_inbound here) had its run directory removed only once the
 * snapshot's git ended, in the background, which nothing at shutdown waits for. A service stopped
 * meanwhile (git held by a huge or hostile repository, up to its 120 s limit) left the run
 * directory, with the launch's attachments and a partial index, of a run that does not exist.
 * Before the change the launch removed it before it answered.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { testEngine } from '../support/db.js';

let h: TestHarness;
let hold: string;
let started: string;
let savedPath: string | undefined;

beforeAll(async () => {
  const dir = join((await import('node:os')).tmpdir(), `baton-attack-snapshot-drop-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  hold = join(dir, 'hold');
  started = join(dir, 'started');
  // While `hold` exists, an `add -A` waits (a repository whose git takes long).
  await writeFile(join(bin, 'git'), `#!/bin/sh\ncase "$*" in *" add -A"*) touch ${started}; while [ -e ${hold} ]; do sleep 0.02; done;; esac\nexec ${realGit} "$@"\n`, { mode: 0o755 });
  savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath ?? '/usr/bin:/bin'}`;
  h = await createHarness();
});
afterAll(async () => {
  await rm(hold, { force: true });
  process.env.PATH = savedPath;
  await h?.dispose();
});

describe(`a launch that was not created leaves no run directory at shutdown (${testEngine})`, () => {
  it('removes the run directory before the launch answers, while the snapshot\'s git still runs', async () => {
    const cwd = join(h.root, 'repo');
    await mkdir(cwd, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd, env: { PATH: savedPath ?? '/usr/bin:/bin' } });
    await writeFile(join(cwd, 'a.txt'), 'a\n');
    const createRun = h.store.createRun.bind(h.store);
    // Another process answered the same event meanwhile: the transaction fails after its read.
    h.store.createRun = (async (...args: Parameters<typeof createRun>) => {
      const key = args[4];
      if (key) await h.store.markInboundHandled(key.platform, key.dedupeKey);
      return createRun(...args);
    }) as typeof createRun;
    const ids: RunId[] = [];
    const begin = h.supervisor.beginLaunchSnapshot.bind(h.supervisor);
    h.supervisor.beginLaunchSnapshot = (runId: RunId, at: string) => {
      ids.push(runId);
      begin(runId, at);
    };
    await writeFile(hold, '');
    try {
      const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} success`));
      expect(result.kind).toBe('duplicate');
      expect(ids).toHaveLength(1);
      // The service stops once the snapshot's git add runs (held).
      for (let i = 0; i < 500 && !existsSync(started); i++) await new Promise((r) => setTimeout(r, 20));
      expect(existsSync(started)).toBe(true);
      await h.supervisor.shutdown();
      expect(existsSync(join(h.runsDir, ids[0]!))).toBe(false);
    } finally {
      h.store.createRun = createRun;
      h.supervisor.beginLaunchSnapshot = begin;
      await rm(hold, { force: true });
    }
    // Nothing comes back once git ended.
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(join(h.runsDir, ids[0]!))).toBe(false);
  }, 30_000);
});
