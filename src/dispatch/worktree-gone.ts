/**
 * A resume whose worktree is gone: refused before anything is resolved (the workspace gate would
 * say "create the directory first", and a directory made so is not the worktree), with a button
 * that checks the run's branch out again; and what that button does.
 */
import { isBatonError, type BatonError } from '../core/errors.js';
import { branchExists, restoreRunWorktree, worktreeGoneError, worktreeIntact } from '../harness/worktree-restore.js';
import type { ButtonJson } from '../core/buttons.js';
import { runTag } from '../wording/run-tag.js';
import type { RunRow } from '../store/schema.js';

/** The action of the Restore worktree button; its argument is the run id. */
export const RESTORE_WORKTREE_ACTION = 'restore_worktree';

/**
 * Refuses to resume `parent` when it ran in a worktree of its own that is no longer one.
 *
 * @throws BatonError `worktree_gone` naming the worktree and whether its branch is still there.
 */
export async function assertWorktreeThere(parent: RunRow): Promise<void> {
  if (!parent.branch || !parent.sourceRoot) return;
  if (await worktreeIntact(parent.worktreeRoot)) return;
  const recorded = { worktreeRoot: parent.worktreeRoot, branch: parent.branch, sourceRoot: parent.sourceRoot };
  throw worktreeGoneError(parent.id, recorded, await branchExists(parent.sourceRoot, parent.branch), runTag);
}

/** The buttons that go with a refusal: Restore worktree when the worktree is gone but its branch is not. */
export function refusalButtons(err: BatonError): ButtonJson[] | undefined {
  if (
    !isBatonError(err, 'worktree_gone') ||
    err.details['branchExists'] !== true ||
    typeof err.details['runId'] !== 'string'
  )
    return undefined;
  return [{ label: 'Restore worktree', action: RESTORE_WORKTREE_ACTION, arg: err.details['runId'] }];
}

/**
 * What a press of Restore worktree does for `run`: its branch checked out again at its
 * worktree's place (the button, and `baton worktrees restore RUN_ID`).
 *
 * @returns `ok` when the worktree is there now, and the words for the owner.
 */
export async function pressRestoreWorktree(run: RunRow): Promise<{ ok: boolean; text: string }> {
  if (!run.branch || !run.sourceRoot) return { ok: false, text: 'That run did not have a worktree of its own.' };
  if (run.status === 'starting' || run.status === 'running' || run.status === 'queued')
    return { ok: false, text: 'That run is still active; wait for its outcome.' };
  try {
    const done = await restoreRunWorktree(
      run.id,
      {
        worktreeRoot: run.worktreeRoot,
        branch: run.branch,
        sourceRoot: run.sourceRoot,
      },
      runTag,
    );
    const text =
      done === 'restored'
        ? `Restored ${run.worktreeRoot} on branch ${run.branch}. Reply to the run's message to continue.`
        : `${run.worktreeRoot} is already there, on branch ${run.branch}. Reply to the run's message to continue.`;
    return { ok: true, text };
  } catch (err) {
    if (!isBatonError(err)) throw err;
    return { ok: false, text: err.message };
  }
}
