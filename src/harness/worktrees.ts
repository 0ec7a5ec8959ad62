/**
 * A git worktree per run: `git worktree add -b baton/<run id>
 * $BATON_HOME/worktrees/<repo>/<run id> HEAD`, so parallel runs on one repository each hold their
 * own worktree lock, and the retention that removes them again. Every git call goes through
 * {@link runGit}: `worktree add` checks files out, which would otherwise run the repository's
 * smudge filters and `post-checkout` hook.
 */
import { mkdir, realpath, rm, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
import type { RunRow } from '../store/schema.js';
import { runGit } from './git.js';
import { gitWorktreeEntry } from './git-worktree-entry.js';
import { isInside } from './workspace.js';

/** Where a run with its own worktree happens. */
export interface RunWorktree {
  /** The run's directory inside the worktree: the same place relative to the top as the asked-for directory. */
  cwd: string;
  /** The worktree's directory, `<worktreesDir>/<repo>/<run id>`: the run's lock domain. */
  worktreeRoot: string;
  /** `baton/<run id>`. */
  branch: string;
  /** Real path of the top of the checkout the worktree was added from. */
  sourceRoot: string;
}

/** The branch of a run's worktree. */
export function worktreeBranch(runId: string): string {
  return `baton/${runId}`;
}

/**
 * Adds a worktree for `runId` on a new branch `baton/<run id>` from the current `HEAD` of the
 * checkout holding `cwd`.
 *
 * @param cwd the asked-for run directory, real and past the workspace gate.
 * @param worktreesDir `$BATON_HOME/worktrees`, created 0700 when missing.
 * @throws BatonError `worktree_refused` when `cwd` is not in a git work tree (including a bare
 *   repository's directory), `HEAD` names no commit yet, or `cwd` lies in a directory git does
 *   not track (so the worktree would not have it); `git_failed` when `git worktree add` fails.
 */
export async function addRunWorktree(cwd: string, runId: string, worktreesDir: string): Promise<RunWorktree> {
  const inside = await runGit(['rev-parse', '--is-inside-work-tree'], { cwd, allowFailure: true });
  if (inside.exitCode !== 0 || inside.stdout.trim() !== 'true') {
    const bare = await runGit(['rev-parse', '--is-bare-repository'], { cwd, allowFailure: true });
    const what =
      bare.stdout.trim() === 'true'
        ? 'is a bare git repository (it has no files to work on)'
        : 'is not in a git checkout';
    throw refused(
      `${cwd} ${what}, so a run there cannot get its own worktree. Run without the worktree option (and with [workspace] worktrees = "off"), or use a checkout.`,
    );
  }
  const head = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd, allowFailure: true });
  if (head.exitCode !== 0) {
    throw refused(
      `${cwd} has no commit yet (its HEAD is unborn), so there is nothing to branch a worktree from. Commit once, or run without the worktree option.`,
    );
  }
  const top = (await runGit(['rev-parse', '--show-toplevel'], { cwd })).stdout.trim();
  const sourceRoot = await realpath(top);
  const branch = worktreeBranch(runId);
  const repoDir = join(worktreesDir, safeName(basename(sourceRoot)));
  await mkdir(repoDir, { recursive: true, mode: 0o700 });
  const worktreeRoot = join(await realpath(repoDir), runId);
  await runGit(['worktree', 'add', '--quiet', '-b', branch, worktreeRoot, 'HEAD'], { cwd: sourceRoot });
  const runCwd = join(worktreeRoot, relative(sourceRoot, cwd));
  const isDir = await stat(runCwd).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    await removeWorktree(sourceRoot, worktreeRoot, branch, true).catch(() => undefined);
    throw refused(
      `${cwd} is not tracked by git in ${sourceRoot}, so the run's worktree would not have it. Run in the checkout's top (${sourceRoot}) or a tracked directory.`,
    );
  }
  return { cwd: runCwd, worktreeRoot, branch, sourceRoot };
}

/**
 * Removes what an earlier attempt to prepare run `runId` may have left of its worktree (a process
 * killed, or a database write that failed, between `git worktree add` and the write recording
 * it): the directory `<worktreesDir>/<repo>/<run id>` and the branch `baton/<run id>` in the
 * checkout holding `cwd`. Only for a run nothing runs in yet. Nothing there is not an error.
 *
 * @param cwd the asked-for run directory, real and past the workspace gate.
 */
export async function discardLeftoverRunWorktree(cwd: string, runId: string, worktreesDir: string): Promise<void> {
  const top = await runGit(['rev-parse', '--show-toplevel'], { cwd, allowFailure: true });
  if (top.exitCode !== 0 || !top.stdout.trim()) return;
  const sourceRoot = await realpath(top.stdout.trim());
  const repoDir = join(worktreesDir, safeName(basename(sourceRoot)));
  const worktreeRoot = join(await realpath(repoDir).catch(() => repoDir), runId);
  await runGit(['worktree', 'remove', '--force', worktreeRoot], { cwd: sourceRoot, allowFailure: true });
  await runGit(['worktree', 'prune'], { cwd: sourceRoot, allowFailure: true });
  await runGit(['branch', '-D', worktreeBranch(runId)], { cwd: sourceRoot, allowFailure: true });
}

/**
 * Removes a worktree this launch made and its branch again (the run was refused before it
 * started, so the branch holds nothing).
 */
export async function discardRunWorktree(worktree: RunWorktree): Promise<void> {
  await removeWorktree(worktree.sourceRoot, worktree.worktreeRoot, worktree.branch, true);
}

async function removeWorktree(
  sourceRoot: string,
  worktreeRoot: string,
  branch: string | undefined,
  force: boolean,
): Promise<void> {
  await runGit(['worktree', 'remove', ...(force ? ['--force'] : []), worktreeRoot], { cwd: sourceRoot });
  if (branch) await runGit(['branch', '-D', branch], { cwd: sourceRoot });
}

/** `git diff --shortstat` of the worktree against its branch's tip, plus untracked files, or undefined when nothing changed. */
export async function worktreeChanges(worktreeRoot: string): Promise<string | undefined> {
  const stat = (
    await runGit(['diff', '--no-ext-diff', '--no-textconv', '--shortstat', 'HEAD'], {
      cwd: worktreeRoot,
      allowFailure: true,
    })
  ).stdout.trim();
  const untracked = (
    await runGit(['ls-files', '--others', '--exclude-standard', '-z'], { cwd: worktreeRoot, allowFailure: true })
  ).stdout
    .split('\0')
    .filter(Boolean).length;
  const parts = [stat, untracked > 0 ? `${untracked} new file${untracked === 1 ? '' : 's'}` : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

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
    if (state.removed) {
      const lock = state.gitLock;
      const reason = `"${lock ?? ''}"`;
      if (lock !== undefined && !options.unlock && !isBatonsLock(lock)) {
        actions.push({
          runId: state.runId,
          action: 'kept',
          detail: `${state.path} is gone, but git in ${state.sourceRoot} keeps it registered and locked (${reason}), so its branch ${state.branch} cannot be deleted; kept. If its disk is only unmounted, mount it; else \`baton worktrees prune --unlock\` unlocks and clears it`,
        });
        continue;
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
        options.logger.warn(
          { err, runId: state.runId, path: state.path },
          'worktree prune could not unlock a worktree',
        );
        actions.push({
          runId: state.runId,
          action: 'kept',
          detail: `${state.path}: ${err instanceof Error ? err.message : String(err)}`,
        });
        continue;
      }
      await options.store.runs.markWorktreeRemoved(state.path, removedAt);
      const branch = state.branchExists
        ? `branch ${state.branch} is still in ${state.sourceRoot}`
        : `branch ${state.branch} is gone too`;
      const unlocked = lock !== undefined ? `; git's lock (${reason}) lifted and its entry removed` : '';
      actions.push({
        runId: state.runId,
        action: 'forgotten',
        detail: `${state.path} was already gone${unlocked}; record cleared (${branch})`,
      });
      continue;
    }
    const merged = state.branchExists && state.unmergedCommits === 0 && !state.dirty;
    const old = (state.endedAt?.getTime() ?? Number.POSITIVE_INFINITY) < cutoffMs;
    if (!merged && !old) continue;
    try {
      if (state.dirty && !options.force) {
        actions.push({
          runId: state.runId,
          action: 'kept',
          detail: `${state.path} has uncommitted changes; kept (commit them, or prune with --force to discard them)`,
        });
        continue;
      }
      const sourceThere = await stat(state.sourceRoot).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!sourceThere) {
        await rm(state.path, { recursive: true, force: true });
        await options.store.runs.markWorktreeRemoved(state.path, removedAt);
        actions.push({
          runId: state.runId,
          action: 'removed',
          detail: `${state.path} removed (its checkout ${state.sourceRoot} is gone)`,
        });
        continue;
      }
      const deleteBranch = state.branchExists && state.unmergedCommits === 0;
      await removeWorktree(state.sourceRoot, state.path, deleteBranch ? state.branch : undefined, state.dirty);
      await options.store.runs.markWorktreeRemoved(state.path, removedAt);
      actions.push({
        runId: state.runId,
        action: 'removed',
        detail:
          deleteBranch || !state.branchExists
            ? `${state.path} removed${deleteBranch ? ` with its merged branch ${state.branch}` : ''}`
            : `${state.path} removed; branch ${state.branch} kept: ${state.unmergedCommits} commit${state.unmergedCommits === 1 ? '' : 's'} not merged into HEAD of ${state.sourceRoot}`,
      });
    } catch (err) {
      options.logger.warn({ err, runId: state.runId, path: state.path }, 'worktree prune skipped a worktree');
      actions.push({
        runId: state.runId,
        action: 'kept',
        detail: `${state.path}: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  for (const action of actions) options.logger.info({ runId: action.runId, action: action.action }, action.detail);
  return actions;
}

/** True when `path` lies in `$BATON_HOME/worktrees` (a root baton owns). */
export function isInWorktreesDir(path: string, worktreesDir: string): boolean {
  return isInside(path, worktreesDir);
}

/**
 * A lock baton itself caused: the one `git worktree add` holds while it runs (reason
 * `initializing`, builtin/worktree.c), left behind when baton was stopped during an add.
 */
function isBatonsLock(reason: string): boolean {
  return reason === 'initializing';
}

function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return cleaned || 'repo';
}

function refused(message: string): BatonError {
  return new BatonError('worktree_refused', message);
}
