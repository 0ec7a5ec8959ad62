/**
 * A git worktree per run: `git worktree add -b baton/<run id>
 * $BATON_HOME/worktrees/<repo>/<run id> HEAD`, so parallel runs on one repository each hold their
 * own worktree lock, and the retention that removes them again. Every git call goes through
 * {@link runGit}: `worktree add` checks files out, which would otherwise run the repository's
 * smudge filters and `post-checkout` hook.
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { BatonError } from '../core/errors.js';
import { runGit } from './git.js';
import { removeWorktree } from './worktree-remove.js';
import { isInside } from './workspace.js';

export { listWorktrees, type WorktreeState } from './worktree-state.js';
export { pruneWorktrees, type PruneAction, type PruneOptions } from './worktree-prune.js';

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

/** True when `path` lies in `$BATON_HOME/worktrees` (a root baton owns). */
export function isInWorktreesDir(path: string, worktreesDir: string): boolean {
  return isInside(path, worktreesDir);
}

function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return cleaned || 'repo';
}

function refused(message: string): BatonError {
  return new BatonError('worktree_refused', message);
}
