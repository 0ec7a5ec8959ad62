/**
 * The launch snapshot begun inside the launch transaction (issue #15): once the transaction's read
 * found the worktree free, the snapshot's git starts while the commit travels, instead of beside
 * the CLI's start (where it slowed codex's start by ~30 ms at p50 on the 2-core machine). Here,
 * with a `git` that notes each call and a codex that notes its start in the same log: the launch
 * snapshot runs before the CLI and is the one the run's diff uses; a transaction that fails leaves
 * no run directory; a queued run begins none; a run that never spawns leaves no snapshot index.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { SNAPSHOT_FILES } from '../../src/harness/diff.js';
import {
  answerInboundElsewhere,
  createHarness,
  FAKE_CODEX,
  inbound,
  insertRun,
  type TestHarness,
} from '../support/harness.js';
import { holdingGit, type HoldingGit } from '../support/fake-git.js';
import { testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

let h: TestHarness;
let git: HoldingGit;
let repoCounter = 0;

/** A fresh repository under the harness root with one committed file. */
async function repository(): Promise<string> {
  const cwd = join(h.root, `repo${++repoCounter}`);
  await mkdir(cwd, { recursive: true });
  const run = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
      cwd,
      env: { PATH: git.realPath, GIT_CONFIG_NOSYSTEM: '1' },
    });
  run('init', '-q');
  await writeFile(join(cwd, 'kept.txt'), 'kept\n');
  run('add', '-A');
  run('commit', '-qm', 'start');
  return cwd;
}

/** The log's lines: `git <args>` when a git call starts, `done <args>` when it ended, `cli` when the codex started. */
async function logLines(): Promise<string[]> {
  return existsSync(git.log) ? (await readFile(git.log, 'utf8')).trim().split('\n').filter(Boolean) : [];
}

beforeAll(async () => {
  const dir = join((await import('node:os')).tmpdir(), `baton-launch-snapshot-${process.pid}`);
  await mkdir(dir, { recursive: true });
  git = holdingGit(dir);
  const codex = join(dir, 'codex');
  await writeFile(codex, `#!/bin/sh\necho cli >> ${git.log}\nexec ${FAKE_CODEX} "$@"\n`, { mode: 0o755 });
  h = await createHarness({ codexBinary: codex });
});
afterAll(async () => {
  git?.restore();
  await h?.dispose();
});

describe(`launch snapshot begun in the launch transaction (${testEngine})`, () => {
  it("starts the snapshot's git before the run is committed, and the run's diff comes from that snapshot", async () => {
    const cwd = await repository();
    await writeFile(git.log, '');
    // The commit is held until the snapshot's `git add` has started: a snapshot begun only
    // after the spawn (before issue #15's change) never starts here, and the launch times out.
    const createRun = h.store.launches.createRun.bind(h.store);
    h.store.launches.createRun = (async (...args: Parameters<typeof createRun>) => {
      const created = await createRun(...args);
      await waitFor(async () => (await logLines()).some((line) => line.startsWith('git ') && line.includes('add -A')), {
        timeoutMs: 20_000,
        what: "the launch snapshot's git add before the commit returned",
      });
      return created;
    }) as typeof createRun;
    try {
      const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} write-file made-by-run.txt`));
      if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
      await h.supervisor.idle();
      expect(await h.store.runs.getRun(result.runId)).toMatchObject({
        status: 'completed',
        finalMessage: 'wrote a file',
      });
      const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${result.runId}\\] completed`));
      // The file the CLI wrote is the run's change; the committed one is not.
      expect(outcome.text).toMatch(/made-by-run\.txt/);
      expect(outcome.text).not.toMatch(/kept\.txt/);
      const lines = await logLines();
      const cli = lines.indexOf('cli');
      // One launch snapshot, before the CLI started; the end snapshot's add after it.
      const adds = (from: number, to?: number) =>
        lines.slice(from, to).filter((line) => line.startsWith('git ') && line.includes('add -A'));
      expect(adds(0, cli)).toHaveLength(1);
      expect(adds(cli)).toHaveLength(1);
    } finally {
      h.store.launches.createRun = createRun;
    }
  });

  it('does not hold the spawn for a snapshot that takes long: the CLI starts beside it and gets its task when it is over', async () => {
    const cwd = await repository();
    await writeFile(git.log, '');
    await writeFile(git.hold, '');
    let runId: RunId;
    try {
      const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} write-file made-by-run.txt`));
      if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
      runId = result.runId;
      // The CLI starts while the launch snapshot's add is still held.
      await waitFor(async () => (await logLines()).includes('cli'), {
        what: 'the CLI to start beside a held snapshot',
      });
      expect((await logLines()).some((line) => line.startsWith('done ') && line.includes('add -A'))).toBe(false);
    } finally {
      await rm(git.hold, { force: true });
    }
    await h.supervisor.idle();
    // The CLI wrote its file after the snapshot: it is the run's change.
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    expect(outcome.text).toMatch(/made-by-run\.txt/);
  });

  it('removes the run directory of a launch whose transaction failed after its snapshot began', async () => {
    const cwd = await repository();
    const before = new Set(await readdir(h.runsDir).catch(() => [] as string[]));
    // Another process answered the same event meanwhile: the transaction's mark of the inbound
    // event finds it handled (duplicate_inbound) after the read found the worktree free.
    const undo = answerInboundElsewhere(h);
    let began = 0;
    const begin = h.supervisor.beginLaunchSnapshot.bind(h.supervisor);
    h.supervisor.beginLaunchSnapshot = (runId: RunId, at: string) => {
      began++;
      begin(runId, at);
    };
    try {
      const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} success`));
      expect(result.kind).toBe('duplicate');
      expect(began).toBe(1);
      // Removed once the snapshot's git has ended (the reply does not wait for it).
      const left = async () =>
        (await readdir(h.runsDir).catch(() => [] as string[])).filter((name) => !before.has(name));
      await waitFor(async () => (await left()).length === 0, {
        what: 'the run directory of the launch that was not created to go',
      });
      expect(await left()).toEqual([]);
    } finally {
      undo();
      h.supervisor.beginLaunchSnapshot = begin;
    }
  });

  it('begins no snapshot for a run that is queued behind another in its worktree', async () => {
    const cwd = await repository();
    const active = await insertRun(h, cwd);
    const calls: string[] = [];
    const now = new Date();
    const id = newRunId();
    const queued = await h.store.launches.createRun(
      {
        id,
        vendor: 'codex',
        status: 'starting',
        task: 't',
        cwd,
        worktreeRoot: cwd,
        options: { timeoutMinutes: 1, progress: false },
        origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10' },
        supervisor: h.supervisor.supervisorId,
        createdAt: now,
      },
      { runId: id, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: `[run ${id}] queued` },
      10,
      now,
      undefined,
      { maxQueued: 5, launch: { prompt: 't', timeoutMs: 60_000 } },
      () => calls.push(id),
    );
    expect(queued.queued).toBeDefined();
    expect(calls).toEqual([]);
    // The same call for a free worktree calls it once.
    const free = await repository();
    const other = newRunId();
    await h.store.launches.createRun(
      {
        id: other,
        vendor: 'codex',
        status: 'starting',
        task: 't',
        cwd: free,
        worktreeRoot: free,
        options: { timeoutMinutes: 1, progress: false },
        origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '11' },
        supervisor: h.supervisor.supervisorId,
        createdAt: now,
      },
      { runId: other, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: `[run ${other}] started` },
      10,
      now,
      undefined,
      undefined,
      () => calls.push(other),
    );
    expect(calls).toEqual([other]);
    expect(active.status).toBe('starting');
  });

  it('removes the snapshot index of a begun snapshot whose run never spawned', async () => {
    const cwd = await repository();
    // claude is not installed in this harness: the launch fails vendor_missing before any spawn.
    const run = await insertRun(h, cwd);
    const runId = run.id as RunId;
    h.supervisor.beginLaunchSnapshot(runId, cwd);
    h.supervisor.start({ ...run, vendor: 'claude' }, { prompt: 'p' }, 60_000);
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'failed', reason: 'vendor_missing' });
    // Removed once the snapshot's git ended (the failure does not wait for it).
    await waitFor(async () => !existsSync(join(h.runsDir, runId, SNAPSHOT_FILES.start)), {
      what: "the begun snapshot's index to go",
    });
  });
});
