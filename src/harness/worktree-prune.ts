/** Retention of run worktrees: removing those of finished runs that are merged or too old. */
import { rm, stat } from 'node:fs/promises';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
import { runGit } from './git.js';
import { removeWorktree } from './worktree-remove.js';
import { listWorktrees, type WorktreeState } from './worktree-state.js';

/** Options of {@link pruneWorktrees}. */
export interface PruneOptions {
  store: RunStore;
  clock: Clock;
  logger: Logger;
  /** `[workspace] worktree_retention_days` in ms: a finished run's worktree older than this is removed. */
  retentionMs: number;
  /** Also remove worktrees with uncommitted changes (they are lost). @default false */
  force?: boolean;
  /**
   * Also unlock, and clear from git, a removed worktree git keeps locked by someone else (a lock
   * git's own interrupted `worktree add` left, `initializing`, is baton's and always cleared).
   * @default false
   */
  unlock?: boolean;
  /**
   * This node (`[node] name` and host name): only its runs' worktrees are on this disk. Another
   * node's would look removed by hand here. @default every run's (a single machine)
   */
  node?: { name: string; host: string };
}

/** What one prune did with one worktree, in words (`baton worktrees prune` prints them). */
export interface PruneAction {
  runId: string;
  /** `forgotten`: the directory was already gone (removed by hand); its record was cleared. */
  action: 'removed' | 'kept' | 'forgotten';
  detail: string;
}

/**
 * Removes the worktrees of finished runs that are merged (the checkout's `HEAD` contains the
 * branch and nothing is uncommitted) or older than the retention. A merged branch is deleted with
 * its worktree; a branch with commits `HEAD` lacks is kept and said so; a worktree with
 * uncommitted changes is kept and said so unless `force`. Active runs are never touched.
 */
export async function pruneWorktrees(options: PruneOptions): Promise<PruneAction[]> {
  const cutoffMs = options.clock.nowMs() - options.retentionMs;
  const actions: PruneAction[] = [];
  const removedAt = options.clock.now();
  for (const state of await listWorktrees(options.store, options.node)) {
    if (state.runStatus === 'starting' || state.runStatus === 'running') continue;
    const action = state.removed
      ? await forgetRemoved(state, options, removedAt)
      : await pruneFinished(state, options, cutoffMs, removedAt);
    if (action) actions.push(action);
  }
  for (const action of actions) options.logger.info({ runId: action.runId, action: action.action }, action.detail);
  return actions;
}

/**
 * A worktree whose directory is gone: git's entry of it is unlocked (when `unlock` or the lock is
 * baton's) and removed, and its record cleared; kept while someone else's lock stays.
 */
async function forgetRemoved(state: WorktreeState, options: PruneOptions, removedAt: Date): Promise<PruneAction> {
  const lock = state.gitLock;
  const reason = `"${lock ?? ''}"`;
  if (lock !== undefined && !options.unlock && !isBatonsLock(lock)) {
    return {
      runId: state.runId,
      action: 'kept',
      detail: `${state.path} is gone, but git in ${state.sourceRoot} keeps it registered and locked (${reason}), so its branch ${state.branch} cannot be deleted; kept. If its disk is only unmounted, mount it; else \`baton worktrees prune --unlock\` unlocks and clears it`,
    };
  }
  try {
    if (lock !== undefined) await runGit(['worktree', 'unlock', state.path], { cwd: state.sourceRoot });
    // git's entry of the missing worktree goes too: while it stays, git counts the branch as checked out.
    if (
      await stat(state.sourceRoot).then(
        (s) => s.isDirectory(),
        () => false,
      )
    ) {
      await runGit(['worktree', 'remove', '--force', state.path], { cwd: state.sourceRoot, allowFailure: true });
    }
  } catch (err) {
    return keptAfterError(state, options, err, 'worktree prune could not unlock a worktree');
  }
  await options.store.runs.markWorktreeRemoved(state.path, removedAt);
  const branch = state.branchExists
    ? `branch ${state.branch} is still in ${state.sourceRoot}`
    : `branch ${state.branch} is gone too`;
  const unlocked = lock !== undefined ? `; git's lock (${reason}) lifted and its entry removed` : '';
  return {
    runId: state.runId,
    action: 'forgotten',
    detail: `${state.path} was already gone${unlocked}; record cleared (${branch})`,
  };
}

/** A worktree kept because a step of its prune failed: logged, and the failure named. */
function keptAfterError(state: WorktreeState, options: PruneOptions, err: unknown, logMessage: string): PruneAction {
  options.logger.warn({ err, runId: state.runId, path: state.path }, logMessage);
  return {
    runId: state.runId,
    action: 'kept',
    detail: `${state.path}: ${err instanceof Error ? err.message : String(err)}`,
  };
}

/**
 * A finished run's worktree that is still there: removed when merged or older than `cutoffMs`
 * (kept when dirty, unless `force`); undefined when neither.
 */
async function pruneFinished(
  state: WorktreeState,
  options: PruneOptions,
  cutoffMs: number,
  removedAt: Date,
): Promise<PruneAction | undefined> {
  const merged = state.branchExists && state.unmergedCommits === 0 && !state.dirty;
  const old = (state.endedAt?.getTime() ?? Number.POSITIVE_INFINITY) < cutoffMs;
  if (!merged && !old) return undefined;
  try {
    if (state.dirty && !options.force) {
      return {
        runId: state.runId,
        action: 'kept',
        detail: `${state.path} has uncommitted changes; kept (commit them, or prune with --force to discard them)`,
      };
    }
    return await removeFinished(state, options, removedAt);
  } catch (err) {
    return keptAfterError(state, options, err, 'worktree prune skipped a worktree');
  }
}

/**
 * Removes a finished run's worktree (its directory alone when its checkout is gone), with its
 * branch when that is merged, and records it removed.
 *
 * @throws what git or the store throws; the caller keeps the worktree then.
 */
async function removeFinished(state: WorktreeState, options: PruneOptions, removedAt: Date): Promise<PruneAction> {
  const sourceThere = await stat(state.sourceRoot).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!sourceThere) {
    await rm(state.path, { recursive: true, force: true });
    await options.store.runs.markWorktreeRemoved(state.path, removedAt);
    return {
      runId: state.runId,
      action: 'removed',
      detail: `${state.path} removed (its checkout ${state.sourceRoot} is gone)`,
    };
  }
  const deleteBranch = state.branchExists && state.unmergedCommits === 0;
  await removeWorktree(state.sourceRoot, state.path, deleteBranch ? state.branch : undefined, state.dirty);
  await options.store.runs.markWorktreeRemoved(state.path, removedAt);
  return {
    runId: state.runId,
    action: 'removed',
    detail:
      deleteBranch || !state.branchExists
        ? `${state.path} removed${deleteBranch ? ` with its merged branch ${state.branch}` : ''}`
        : `${state.path} removed; branch ${state.branch} kept: ${state.unmergedCommits} commit${state.unmergedCommits === 1 ? '' : 's'} not merged into HEAD of ${state.sourceRoot}`,
  };
}

/**
 * A lock baton itself caused: the one `git worktree add` holds while it runs (reason
 * `initializing`, builtin/worktree.c), left behind when baton was stopped during an add.
 */
function isBatonsLock(reason: string): boolean {
  return reason === 'initializing';
}
