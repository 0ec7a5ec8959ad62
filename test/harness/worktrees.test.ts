/**
 * Run worktrees (issue #17) with real git and the real store: creation through runGit (a hostile
 * repository's hooks and smudge filters do not run), and retention — merged worktrees go with
 * their branch, an old one with unmerged commits goes but its branch stays (and says so), one
 * with uncommitted changes stays unless forced, an active run's is never touched.
 */
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { addRunWorktree, listWorktrees, pruneWorktrees, type RunWorktree } from '../../src/harness/worktrees.js';
import { restoreRunWorktree, worktreeIntact } from '../../src/harness/worktree-restore.js';
import { runTag } from '../../src/wording/run-tag.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { runs, type RunRow } from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const DAY_MS = 86_400_000;
const now = new Date('2026-11-30T08:00:00.000Z');
const clock = { now: () => now, nowMs: () => now.getTime() };
const logger = createLogger({ level: 'silent' });

const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd, stdin: 'ignore' });

describe(`run worktrees on ${testEngine}`, () => {
  const database = useTestDatabase();
  let store: RunStore;
  let dir: string;
  let repo: string;
  let worktreesDir: string;

  beforeAll(async () => {
    store = new RunStore(database.db);
    dir = await mkdtemp(join(tmpdir(), 'baton-worktrees-'));
    repo = join(dir, 'repo');
    worktreesDir = join(dir, 'baton-home', 'worktrees');
    await execa('git', ['init', '-q', repo]);
    await writeFile(join(repo, 'a.txt'), 'a');
    await git(repo, 'add', 'a.txt');
    await git(repo, 'commit', '-q', '-m', 'first');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A worktree made as a launch makes it, and its run row with the given status and end. */
  async function runWith(status: RunRow['status'], endedAt: Date | null): Promise<RunWorktree & { runId: RunId }> {
    const runId = newRunId();
    const worktree = await addRunWorktree(repo, runId, worktreesDir);
    await database.db.insert(runs).values({
      id: runId,
      vendor: 'codex',
      status,
      task: 't',
      cwd: worktree.cwd,
      worktreeRoot: worktree.worktreeRoot,
      branch: worktree.branch,
      sourceRoot: worktree.sourceRoot,
      options: { timeoutMinutes: 30, progress: false },
      origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '1' },
      supervisor: 'testhost:1',
      createdAt: new Date(now.getTime() - 30 * DAY_MS),
      endedAt,
    });
    return { ...worktree, runId };
  }

  it("adds the worktree without running the repository's hooks or smudge filters", async () => {
    const hostile = join(dir, 'hostile');
    await execa('git', ['init', '-q', hostile]);
    await writeFile(join(hostile, '.gitattributes'), '*.txt filter=evil\n');
    await writeFile(join(hostile, 'b.txt'), 'b');
    await git(hostile, 'add', '.gitattributes', 'b.txt');
    await git(hostile, 'commit', '-q', '-m', 'first');
    const marker = join(dir, 'pwned');
    await git(hostile, 'config', 'filter.evil.smudge', `sh -c 'touch ${marker}; cat'`);
    await writeFile(join(hostile, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });

    const worktree = await addRunWorktree(hostile, newRunId(), worktreesDir);
    expect(await readFile(join(worktree.cwd, 'b.txt'), 'utf8')).toBe('b');
    await expect(stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('prunes merged and old worktrees, keeps unmerged branches and uncommitted work, never touches an active run', async () => {
    const merged = await runWith('completed', now); // ended just now, nothing new: merged
    const oldUnmerged = await runWith('completed', new Date(now.getTime() - 10 * DAY_MS));
    await writeFile(join(oldUnmerged.worktreeRoot, 'c.txt'), 'c');
    await git(oldUnmerged.worktreeRoot, 'add', 'c.txt');
    await git(oldUnmerged.worktreeRoot, 'commit', '-q', '-m', 'work');
    const dirty = await runWith('failed', new Date(now.getTime() - 10 * DAY_MS));
    await writeFile(join(dirty.worktreeRoot, 'd.txt'), 'd');
    const active = await runWith('running', null);

    const states = await listWorktrees(store);
    expect(states.find((s) => s.runId === oldUnmerged.runId)).toMatchObject({
      unmergedCommits: 1,
      dirty: false,
      removed: false,
    });
    expect(states.find((s) => s.runId === dirty.runId)).toMatchObject({ unmergedCommits: 0, dirty: true });

    const actions = await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS });
    const byRun = new Map(actions.map((a) => [a.runId, a]));
    expect(byRun.get(merged.runId)).toEqual({
      runId: merged.runId,
      action: 'removed',
      detail: `${merged.worktreeRoot} removed with its merged branch ${merged.branch}`,
    });
    expect(byRun.get(oldUnmerged.runId)).toEqual({
      runId: oldUnmerged.runId,
      action: 'removed',
      detail: `${oldUnmerged.worktreeRoot} removed; branch ${oldUnmerged.branch} kept: 1 commit not merged into HEAD of ${repo}`,
    });
    expect(byRun.get(dirty.runId)).toMatchObject({
      action: 'kept',
      detail: expect.stringContaining('has uncommitted changes; kept'),
    });
    expect(byRun.has(active.runId)).toBe(false);

    const branches = (await git(repo, 'branch', '--list', 'baton/*')).stdout;
    expect(branches).not.toContain(merged.branch);
    expect(branches).toContain(oldUnmerged.branch);
    await expect(stat(merged.worktreeRoot)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(oldUnmerged.worktreeRoot)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(dirty.worktreeRoot, 'd.txt'), 'utf8')).toBe('d');
    expect((await stat(active.worktreeRoot)).isDirectory()).toBe(true);

    const forced = await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS, force: true });
    expect(forced.find((a) => a.runId === dirty.runId)).toMatchObject({ action: 'removed' });
    await expect(stat(dirty.worktreeRoot)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(active.worktreeRoot)).isDirectory()).toBe(true);

    // What prune removed is no longer listed: only the active run's worktree is left.
    expect((await listWorktrees(store)).map((s) => s.runId)).not.toContain(merged.runId);
    expect((await listWorktrees(store)).map((s) => s.runId)).not.toContain(oldUnmerged.runId);
    expect((await listWorktrees(store)).map((s) => s.runId)).not.toContain(dirty.runId);
  });

  it('lists a worktree removed by hand as removed until prune clears its record', async () => {
    const byHand = await runWith('completed', now);
    await rm(byHand.worktreeRoot, { recursive: true, force: true });
    expect((await listWorktrees(store)).find((s) => s.runId === byHand.runId)).toMatchObject({ removed: true });

    const actions = await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS });
    expect(actions.find((a) => a.runId === byHand.runId)).toEqual({
      runId: byHand.runId,
      action: 'forgotten',
      detail: `${byHand.worktreeRoot} was already gone; record cleared (branch ${byHand.branch} is still in ${repo})`,
    });
    expect((await listWorktrees(store)).map((s) => s.runId)).not.toContain(byHand.runId);
    // A second prune has nothing more to say about it.
    expect((await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS })).map((a) => a.runId)).not.toContain(
      byHand.runId,
    );
  });

  it('a worktree deleted while git holds it locked is kept, its lock named, until the owner asks to unlock it', async () => {
    const locked = await runWith('completed', now);
    await git(repo, 'worktree', 'lock', '--reason', 'on the usb disk', locked.worktreeRoot);
    await rm(locked.worktreeRoot, { recursive: true, force: true });
    expect((await listWorktrees(store)).find((s) => s.runId === locked.runId)).toMatchObject({
      removed: true,
      gitLock: 'on the usb disk',
    });

    const kept = (await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS })).find(
      (a) => a.runId === locked.runId,
    );
    expect(kept).toEqual({
      runId: locked.runId,
      action: 'kept',
      detail: `${locked.worktreeRoot} is gone, but git in ${repo} keeps it registered and locked ("on the usb disk"), so its branch ${locked.branch} cannot be deleted; kept. If its disk is only unmounted, mount it; else \`baton worktrees prune --unlock\` unlocks and clears it`,
    });
    expect((await listWorktrees(store)).map((s) => s.runId)).toContain(locked.runId);

    const cleared = (await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS, unlock: true })).find(
      (a) => a.runId === locked.runId,
    );
    expect(cleared).toEqual({
      runId: locked.runId,
      action: 'forgotten',
      detail: `${locked.worktreeRoot} was already gone; git's lock ("on the usb disk") lifted and its entry removed; record cleared (branch ${locked.branch} is still in ${repo})`,
    });
    expect((await git(repo, 'worktree', 'list', '--porcelain')).stdout).not.toContain(locked.worktreeRoot);
    await git(repo, 'branch', '-D', locked.branch);
  });

  it("git's own lock of a worktree add that never finished is baton's: cleared without asking", async () => {
    const interrupted = await runWith('failed', now);
    // What `git worktree add` leaves while it runs (builtin/worktree.c), kept by a killed add.
    const admin = (await readFile(join(interrupted.worktreeRoot, '.git'), 'utf8')).replace(/^gitdir: /, '').trim();
    await writeFile(join(admin, 'locked'), 'initializing');
    await rm(interrupted.worktreeRoot, { recursive: true, force: true });
    const action = (await pruneWorktrees({ store, clock, logger, retentionMs: 7 * DAY_MS })).find(
      (a) => a.runId === interrupted.runId,
    );
    expect(action).toMatchObject({ action: 'forgotten' });
    expect((await git(repo, 'worktree', 'list', '--porcelain')).stdout).not.toContain(interrupted.worktreeRoot);
  });

  it('restores a deleted worktree from its branch only where that is safe: never over files, a lock, or a branch that is gone', async () => {
    const run = await runWith('completed', now);
    const recorded = { worktreeRoot: run.worktreeRoot, branch: run.branch, sourceRoot: run.sourceRoot };
    expect(await worktreeIntact(run.worktreeRoot)).toBe(true);
    expect(await restoreRunWorktree(run.runId, recorded, runTag)).toBe('present');

    await rm(run.worktreeRoot, { recursive: true, force: true });
    await mkdir(run.worktreeRoot);
    await writeFile(join(run.worktreeRoot, 'notes.txt'), "someone else's");
    expect(await worktreeIntact(run.worktreeRoot)).toBe(false);
    await expect(restoreRunWorktree(run.runId, recorded, runTag)).rejects.toMatchObject({
      code: 'worktree_gone',
      message: expect.stringContaining('holds files but is no longer the worktree'),
    });

    await rm(run.worktreeRoot, { recursive: true, force: true });
    const admin = join(repo, '.git', 'worktrees', run.runId);
    await writeFile(join(admin, 'locked'), 'on the usb disk');
    await expect(restoreRunWorktree(run.runId, recorded, runTag)).rejects.toMatchObject({
      code: 'worktree_locked',
      message: expect.stringContaining('registered and locked ("on the usb disk")'),
    });
    await rm(join(admin, 'locked'));

    expect(await restoreRunWorktree(run.runId, recorded, runTag)).toBe('restored');
    expect(await worktreeIntact(run.worktreeRoot)).toBe(true);
    expect((await git(run.worktreeRoot, 'branch', '--show-current')).stdout.trim()).toBe(run.branch);

    await git(repo, 'worktree', 'remove', '--force', run.worktreeRoot);
    await git(repo, 'branch', '-D', run.branch);
    await expect(restoreRunWorktree(run.runId, recorded, runTag)).rejects.toMatchObject({
      code: 'worktree_gone',
      details: { branchExists: false },
    });
  });

  it('never restores a worktree on a branch another worktree has checked out, the main checkout included', async () => {
    const run = await runWith('completed', now);
    const recorded = { worktreeRoot: run.worktreeRoot, branch: run.branch, sourceRoot: run.sourceRoot };
    await rm(run.worktreeRoot, { recursive: true, force: true });
    await git(repo, 'worktree', 'prune');
    const elsewhere = join(dir, 'by-hand');
    await git(repo, 'worktree', 'add', '--quiet', elsewhere, run.branch);
    await expect(restoreRunWorktree(run.runId, recorded, runTag)).rejects.toMatchObject({
      code: 'worktree_branch_busy',
      message: expect.stringContaining(`checked out in ${elsewhere}`),
      details: { checkedOutAt: elsewhere },
    });
    expect(await worktreeIntact(run.worktreeRoot)).toBe(false);
    await git(repo, 'worktree', 'remove', elsewhere);

    const before = (await git(repo, 'branch', '--show-current')).stdout.trim();
    await git(repo, 'switch', '--quiet', run.branch);
    try {
      await expect(restoreRunWorktree(run.runId, recorded, runTag)).rejects.toMatchObject({
        code: 'worktree_branch_busy',
        details: { checkedOutAt: repo },
      });
    } finally {
      await git(repo, 'switch', '--quiet', before);
    }
    expect(await restoreRunWorktree(run.runId, recorded, runTag)).toBe('restored');
    expect((await git(run.worktreeRoot, 'branch', '--show-current')).stdout.trim()).toBe(run.branch);
  });
});
