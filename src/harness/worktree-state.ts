/** What `baton worktrees` and retention know of each run worktree: in use, dirty, merged, gone. */
import { stat } from 'node:fs/promises';
import type { RunStore } from '../store/runs-repo.js';
import type { RunRow } from '../store/schema.js';
import { runGit } from './git.js';
import { gitWorktreeEntry } from './git-worktree-entry.js';

/** The state of one run's worktree, for `baton worktrees` and retention. */
export interface WorktreeState {
  runId: string;
  branch: string;
  path: string;
  sourceRoot: string;
  runStatus: RunRow['status'];
  endedAt: Date | null;
  /**
   * The worktree's directory is gone but not yet recorded so (removed by hand, or its disk
   * lost); the next prune clears it. Worktrees baton removed itself are not listed at all.
   */
  removed: boolean;
  /** Uncommitted changes (tracked or new files) in the worktree. */
  dirty: boolean;
  /** Commits on the branch that the checkout's `HEAD` does not contain; 0 when merged. */
  unmergedCommits: number;
  /** The branch still exists in the source checkout. */
  branchExists: boolean;
  /**
   * For a removed worktree git still keeps registered and locked: the lock's reason ('' for
   * none). Such an entry keeps its branch from being deleted until it is unlocked.
   */
  gitLock?: string;
}

/**
 * The state of every run worktree baton made and has not removed, newest first; a worktree that resumed runs share
 * is listed once, under its newest run (whose status decides whether it is in use). With `node`,
 * only that node's (see {@link RunStore.runsWithWorktree}).
 */
export async function listWorktrees(store: RunStore, node?: { name: string; host: string }): Promise<WorktreeState[]> {
  const out: WorktreeState[] = [];
  const seen = new Set<string>();
  for (const run of await store.runs.runsWithWorktree(node)) {
    if (seen.has(run.worktreeRoot)) continue;
    seen.add(run.worktreeRoot);
    out.push(await worktreeState(run));
  }
  return out;
}

async function worktreeState(run: RunRow): Promise<WorktreeState> {
  const branch = run.branch!;
  const sourceRoot = run.sourceRoot!;
  const removed = !(await stat(run.worktreeRoot).then(
    (s) => s.isDirectory(),
    () => false,
  ));
  const dirty = removed
    ? false
    : (
        await runGit(['status', '--porcelain', '--untracked-files=normal'], {
          cwd: run.worktreeRoot,
          allowFailure: true,
        })
      ).stdout.trim() !== '';
  const sourceThere = await stat(sourceRoot).then(
    (s) => s.isDirectory(),
    () => false,
  );
  let branchExists = false;
  let unmergedCommits = 0;
  if (sourceThere) {
    branchExists =
      (
        await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
          cwd: sourceRoot,
          allowFailure: true,
        })
      ).exitCode === 0;
    if (branchExists) {
      const count = await runGit(['rev-list', '--count', `HEAD..refs/heads/${branch}`], {
        cwd: sourceRoot,
        allowFailure: true,
      });
      unmergedCommits = Number(count.stdout.trim()) || 0;
    }
  }
  const gitLock = removed && sourceThere ? (await gitWorktreeEntry(sourceRoot, run.worktreeRoot))?.locked : undefined;
  return {
    runId: run.id,
    branch,
    path: run.worktreeRoot,
    sourceRoot,
    runStatus: run.status,
    endedAt: run.endedAt,
    removed,
    dirty,
    unmergedCommits,
    branchExists,
    ...(gitLock !== undefined ? { gitLock } : {}),
  };
}
