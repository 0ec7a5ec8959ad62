/**
 * git's own record of one worktree (`git worktree list --porcelain`): whether it is registered,
 * missing (prunable) or locked, and the lock's reason. baton's record and git's can disagree: a
 * locked worktree whose directory is gone stays registered in git, and keeps its branch from
 * being deleted, until it is unlocked.
 */
import { realpath } from 'node:fs/promises';
import { runGit } from './git.js';

/** One `worktree` stanza of `git worktree list --porcelain`. */
export interface GitWorktreeEntry {
  path: string;
  /** The lock's reason ('' when locked without one); undefined when not locked. */
  locked?: string;
  /** git would prune it: its directory (gitdir file) is gone. */
  prunable: boolean;
  /** The branch checked out there, as a full ref (`refs/heads/…`); undefined when detached or bare. */
  branch?: string;
}

/**
 * The entry of `worktreePath` in the worktree list of the checkout at `sourceRoot`, or undefined
 * when git has none (or the checkout is gone).
 */
export async function gitWorktreeEntry(
  sourceRoot: string,
  worktreePath: string,
): Promise<GitWorktreeEntry | undefined> {
  const listed = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: sourceRoot, allowFailure: true });
  if (listed.exitCode !== 0) return undefined;
  const want = await realpath(worktreePath).catch(() => worktreePath);
  for (const entry of parseWorktreeList(listed.stdout)) {
    if (entry.path === worktreePath || entry.path === want) return entry;
  }
  return undefined;
}

/**
 * The worktrees of the checkout at `sourceRoot` (its main one included) that have `branch`
 * (a short name, `baton/<run id>`) checked out, in git's order; empty when none or the checkout
 * is gone.
 */
export async function gitWorktreesOnBranch(sourceRoot: string, branch: string): Promise<GitWorktreeEntry[]> {
  const listed = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: sourceRoot, allowFailure: true });
  if (listed.exitCode !== 0) return [];
  return parseWorktreeList(listed.stdout).filter((entry) => entry.branch === `refs/heads/${branch}`);
}

/**
 * Parses `git worktree list --porcelain -z`: NUL-terminated lines, stanzas separated by an empty
 * one; `locked` and `prunable` optionally followed by a space and the reason (git-worktree(1),
 * "Porcelain Format").
 */
export function parseWorktreeList(output: string): GitWorktreeEntry[] {
  const entries: GitWorktreeEntry[] = [];
  let current: GitWorktreeEntry | undefined;
  for (const line of output.split('\0')) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice('worktree '.length), prunable: false };
      entries.push(current);
    } else if (!current) {
      continue;
    } else if (line === 'locked' || line.startsWith('locked ')) {
      current.locked = line.slice('locked '.length);
    } else if (line === 'prunable' || line.startsWith('prunable ')) {
      current.prunable = true;
    } else if (line.startsWith('branch ')) {
      current.branch = line.slice('branch '.length);
    } else if (line === '') {
      current = undefined;
    }
  }
  return entries;
}
