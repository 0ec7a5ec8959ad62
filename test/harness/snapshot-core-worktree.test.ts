/**
 * Attack: the launch snapshot's fast path runs `git add -A` in the top baton's discovery found
 * and takes that top for git's. A repository whose `.git/config` sets `core.worktree` moves git's
 * working tree elsewhere — any directory baton can read. The snapshot then staged that directory,
 * and the run's diff (stat, patch file, chat) was the change there, not the run's: another
 * directory's content leaked into the run's outcome and the agent's own change was missing. The
 * long way (rev-parse) finds no repository from git's top and fails: no diff.
 *
 * The second case attacks the check that keeps the fast path when core.worktree names the top
 * found (a submodule's own core.worktree does): the value was compared lexically, but git resolves
 * it physically (realpath: `..` after a symlink climbs from the link's target).
 * `core.worktree = link/../../../repo` with `.git/link` a symlink three levels down elsewhere reads
 * as the top lexically, while git's working tree is `<elsewhere>/repo`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { createLogger } from '../../src/core/logger.js';
import { scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-attack-core-worktree-');

/**
 * A repository `<dir>/repo` and a directory `elsewhere` holding `secret.txt`; `configure` points the
 * repository's core.worktree at `elsewhere`. Snapshots the repository, changes both, and asserts
 * that neither the run's stat nor its patch names the secret.
 */
async function expectNoLeak(dir: string, elsewhere: string, configure: (repo: string) => void): Promise<void> {
  const repo = join(dir, 'repo');
  mkdirSync(repo, { recursive: true });
  mkdirSync(elsewhere, { recursive: true });
  writeFileSync(join(elsewhere, 'secret.txt'), 'secret one\n');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  configure(repo);

  const start = await snapshotTree(repo, join(dir, 'start.index')).catch(() => undefined);
  writeFileSync(join(elsewhere, 'secret.txt'), 'secret two\n');
  writeFileSync(join(repo, 'a.txt'), 'changed by the run\n');
  if (!start) return; // no snapshot, no diff: nothing leaks
  const patchPath = join(dir, 'run.patch');
  const diff = await diffSinceSnapshot(
    start,
    join(dir, 'end.index'),
    patchPath,
    1_000_000,
    createLogger({ level: 'silent' }),
  ).catch(() => undefined);
  expect(diff?.stat ?? '').not.toContain('secret.txt');
  let patch = '';
  try {
    patch = readFileSync(patchPath, 'utf8');
  } catch {
    // no patch file
  }
  expect(patch).not.toContain('secret');
}

describe('snapshot of a repository whose config sets core.worktree', () => {
  it('never makes the run diff of a directory outside the repository', async () => {
    const dir = join(base, 'plain');
    const elsewhere = join(dir, 'elsewhere');
    await expectNoLeak(dir, elsewhere, (repo) =>
      execFileSync('git', ['config', 'core.worktree', elsewhere], { cwd: repo }),
    );
  }, 20_000);

  it('never does so when core.worktree climbs through a symlink to look like the top', async () => {
    const dir = join(base, 'link');
    const elsewhere = join(dir, 'evil', 'repo');
    await expectNoLeak(dir, elsewhere, (repo) => {
      mkdirSync(join(dir, 'evil', 'a', 'b', 'c'), { recursive: true });
      symlinkSync(join(dir, 'evil', 'a', 'b', 'c'), join(repo, '.git', 'link'));
      execFileSync('git', ['config', 'core.worktree', 'link/../../../repo'], { cwd: repo });
      // git's own answer: the directory elsewhere
      expect(execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim()).toBe(
        elsewhere,
      );
    });
  }, 20_000);
});
