/**
 * A new run's own git worktree: made when the launch asks or `[workspace] worktrees = "per-run"`,
 * and removed again when the launch is then refused. Shared by a launch here and the placing of
 * a run routed to this node.
 */
import type { BatonConfig } from '../config/index.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { addRunWorktree, discardRunWorktree, type RunWorktree } from '../harness/worktrees.js';

/**
 * The worktree a new run gets: when it asks (`asked`) or `[workspace] worktrees = "per-run"`.
 * Under `per-run` a directory that cannot take one (not a git checkout, no commit yet) runs in
 * place; a run that asked is refused.
 *
 * @param worktreesDir `$BATON_HOME/worktrees`; unset: no run can ask for one.
 * @returns undefined when the run runs in place.
 * @throws BatonError `worktree_refused` (see {@link addRunWorktree}), `git_failed`.
 */
export async function worktreeFor(
  config: BatonConfig,
  worktreesDir: string | undefined,
  cwd: string,
  runId: RunId,
  asked: boolean | undefined,
): Promise<RunWorktree | undefined> {
  if (!asked && config.workspace.worktrees !== 'per-run') return undefined;
  if (!worktreesDir)
    throw new BatonError(
      'worktree_refused',
      'This baton front end cannot make worktrees; run without the worktree option.',
    );
  try {
    return await addRunWorktree(cwd, runId, worktreesDir);
  } catch (err) {
    if (!asked && isBatonError(err, 'worktree_refused')) return undefined;
    throw err;
  }
}

/** Removes a worktree (and its empty branch) made for a launch that was then refused; never throws. */
export async function discardWorktree(worktree: RunWorktree, logger: Logger): Promise<void> {
  await discardRunWorktree(worktree).catch((err: unknown) =>
    logger.warn(
      { err, path: worktree.worktreeRoot, branch: worktree.branch },
      'could not remove the worktree of a refused launch; `baton worktrees prune` removes it',
    ),
  );
}
