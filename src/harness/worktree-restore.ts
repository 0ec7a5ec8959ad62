/**
 * A run's worktree that is no longer there (its directory deleted by hand, or replaced by an
 * empty or foreign one): telling it apart from a live one without running git, and checking the
 * run's branch out again at the same place, so a resume finds its files and its CLI session
 * (claude keys sessions by directory) where they were.
 */
import { readdir, readFile, realpath, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { BatonError } from '../core/errors.js';
import { runGit } from './git.js';
import { gitWorktreeEntry, gitWorktreesOnBranch } from './git-worktree-entry.js';
import type { RunTagger } from './ports.js';

/** A run's worktree as its row records it. */
export interface RecordedWorktree {
  worktreeRoot: string;
  branch: string;
  sourceRoot: string;
}

/**
 * True when `worktreeRoot` is still a git worktree of its own: its `.git` file names an
 * administrative directory that names this `.git` back (what git itself checks). A deleted
 * directory, an empty one made in its place, or another checkout there is not.
 */
export async function worktreeIntact(worktreeRoot: string): Promise<boolean> {
  try {
    const dotGit = join(worktreeRoot, '.git');
    const pointer = /^gitdir: (.+)$/m.exec(await readFile(dotGit, 'utf8'))?.[1]?.trim();
    if (!pointer) return false;
    const adminDir = isAbsolute(pointer) ? pointer : resolve(worktreeRoot, pointer);
    const back = (await readFile(join(adminDir, 'gitdir'), 'utf8')).trim();
    return (await realpath(back)) === (await realpath(dotGit));
  } catch {
    return false;
  }
}

/**
 * The refusal for a resume of a run whose worktree is gone: what happened, and what can be done
 * (the branch still exists: restore it; else start anew).
 *
 * @param branchExists whether `baton/<run id>` is still in the source checkout.
 * @param runTag the wording's `[run …]` tag.
 */
export function worktreeGoneError(
  runId: string,
  worktree: RecordedWorktree,
  branchExists: boolean,
  runTag: RunTagger,
): BatonError {
  const message = branchExists
    ? `${runTag(runId)}'s worktree ${worktree.worktreeRoot} is gone, so it cannot continue there. Its branch ${worktree.branch} is still in ${worktree.sourceRoot}: press Restore worktree (or run \`baton worktrees restore ${runId}\` on the machine) to check it out again in a fresh worktree at the same place, then reply again. Changes that were not committed to the branch are lost.`
    : `${runTag(runId)}'s worktree ${worktree.worktreeRoot} is gone, and so is its branch ${worktree.branch} in ${worktree.sourceRoot}, so it cannot continue. Start a new run.`;
  return new BatonError('worktree_gone', message, {
    details: { runId, path: worktree.worktreeRoot, branch: worktree.branch, branchExists },
  });
}

/** Whether `branch` is still a branch of the checkout at `sourceRoot` (false when that is gone too). */
export async function branchExists(sourceRoot: string, branch: string): Promise<boolean> {
  const there = await stat(sourceRoot).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!there) return false;
  return (
    (
      await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
        cwd: sourceRoot,
        allowFailure: true,
      })
    ).exitCode === 0
  );
}

/**
 * Checks the run's branch out again at its worktree's place: git's record of the missing
 * worktree is replaced (`git worktree add --force`, which overrides only a registered but missing
 * path, never a locked one), an empty directory made in its place is removed first.
 *
 * @returns `restored`, or `present` when the worktree is already there.
 * @throws BatonError `worktree_gone` when the branch or its checkout is gone, or something other
 *   than an empty directory is at the place; `worktree_locked` when git's record is locked
 *   (the lock's reason named); `git_failed` when git fails.
 * @param runTag the wording's `[run …]` tag, for the refusals.
 */
export async function restoreRunWorktree(
  runId: string,
  worktree: RecordedWorktree,
  runTag: RunTagger,
): Promise<'restored' | 'present'> {
  if (await worktreeIntact(worktree.worktreeRoot)) return 'present';
  if (!(await branchExists(worktree.sourceRoot, worktree.branch)))
    throw worktreeGoneError(runId, worktree, false, runTag);
  const entries = await readdir(worktree.worktreeRoot).catch(() => undefined);
  if (entries && entries.length > 0) {
    throw new BatonError(
      'worktree_gone',
      `${worktree.worktreeRoot} holds files but is no longer the worktree of ${runTag(runId)}, so baton leaves it alone. Move it away, then press Restore worktree again.`,
    );
  }
  if (entries) await rmdir(worktree.worktreeRoot);
  const entry = await gitWorktreeEntry(worktree.sourceRoot, worktree.worktreeRoot);
  if (entry?.locked !== undefined) {
    throw new BatonError(
      'worktree_locked',
      `git keeps ${worktree.worktreeRoot} registered and locked${entry.locked ? ` ("${entry.locked}")` : ''}, so baton does not replace it. If its disk is only unmounted, mount it; otherwise unlock it (git -C ${worktree.sourceRoot} worktree unlock ${worktree.worktreeRoot}) and press Restore worktree again.`,
      { details: { path: worktree.worktreeRoot, lockReason: entry.locked } },
    );
  }
  // --force would also check out a branch that another worktree has checked out, and two
  // checkouts of one branch overwrite each other's commits' view of the files; git refuses that
  // without --force, so baton checks it itself before forcing.
  const here = await placeKey(worktree.worktreeRoot);
  for (const other of await gitWorktreesOnBranch(worktree.sourceRoot, worktree.branch)) {
    if ((await placeKey(other.path)) === here) continue; // git's record of the missing one, replaced below
    throw new BatonError(
      'worktree_branch_busy',
      `${runTag(runId)}'s branch ${worktree.branch} is checked out in ${other.path}, so baton does not check it out a second time at ${worktree.worktreeRoot}. ` +
        (other.prunable
          ? `That worktree is gone too; clear git's record of it (git -C ${worktree.sourceRoot} worktree prune) and press Restore worktree again.`
          : `Continue the work there, or switch that checkout to another branch and press Restore worktree again.`),
      { details: { runId, branch: worktree.branch, path: worktree.worktreeRoot, checkedOutAt: other.path } },
    );
  }
  await runGit(['worktree', 'add', '--quiet', '--force', worktree.worktreeRoot, worktree.branch], {
    cwd: worktree.sourceRoot,
  });
  return 'restored';
}

/** A path with its parent's symbolic links resolved, so git's record and baton's compare equal while the directory itself is gone. */
async function placeKey(path: string): Promise<string> {
  const whole = await realpath(path).catch(() => undefined);
  if (whole) return whole;
  const parent = await realpath(dirname(path)).catch(() => dirname(path));
  return join(parent, basename(path));
}
