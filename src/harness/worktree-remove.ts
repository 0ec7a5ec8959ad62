/** Removing a run's worktree and, when asked, its branch, from the checkout it was added from. */
import { runGit } from './git.js';

/**
 * `git worktree remove` (`--force` with `force`: uncommitted changes are lost) of `worktreeRoot`
 * in `sourceRoot`, then `git branch -D branch` when a branch is given.
 *
 * @throws BatonError `git_failed` when either git command fails.
 */
export async function removeWorktree(
  sourceRoot: string,
  worktreeRoot: string,
  branch: string | undefined,
  force: boolean,
): Promise<void> {
  await runGit(['worktree', 'remove', ...(force ? ['--force'] : []), worktreeRoot], { cwd: sourceRoot });
  if (branch) await runGit(['branch', '-D', branch], { cwd: sourceRoot });
}
