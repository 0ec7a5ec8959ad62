/**
 * The tree of a private index (`git write-tree`), written without looking at the working tree.
 *
 * Writing an index back, git re-checks each racily clean entry (its file's mtime not older than
 * the index) against the file in the working tree, through the clean filter the file's attributes
 * name: a command the repository's config chose, read when git starts. Run in an empty directory
 * (git's cwd, `GIT_WORK_TREE` and `GIT_DIR` given), git finds no file for any entry, so it reads
 * none and runs no filter (an entry whose file is missing is left as it is; git 2.39
 * `read-cache.c` `ce_smudge_racily_clean_entry`), and the tree is the index's blobs either way.
 * So the tree can be written at any time, even while the agent may be editing the config, and it
 * costs no hashing of the working tree.
 */
import { mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './git.js';

/** Options of {@link writeIndexTree}. */
export interface IndexTreeOptions {
  /** `PATH` to find git on. Default: this process's. */
  path?: string;
  /** Kill git after this many ms. @default 120_000 */
  timeoutMs?: number;
  /** Nice value for git (0–19). @default 0 (this process's own) */
  niceness?: number;
  /**
   * Give the index file back the mtime it had (rounded down to the second) once git rewrote it
   * with the trees it computed: git treats an entry as racily clean when its file's mtime is not
   * older than the index's, so an index that is used again (the launch snapshot seeds the end one)
   * keeps every entry it had to re-check as one to re-check. An earlier mtime only adds entries
   * to re-check, never removes one. @default false
   */
  keepRacyEntries?: boolean;
}

/**
 * `overrides` plus `core.splitIndex=false` (command scope, as the filter blanking): a private
 * index is written whole, never as a split index. A split one links to `.git/sharedindex.<sha>`,
 * which the agent's own git removes during the run once it is older than
 * `splitIndex.sharedIndexExpire` (a repository may set `now`); the launch index is read again at
 * the run's end, and without its shared index the diff was lost.
 */
export function privateIndex(overrides: Record<string, string>): Record<string, string> {
  const n = Number(overrides['GIT_CONFIG_COUNT'] ?? 0);
  return {
    ...overrides,
    GIT_CONFIG_COUNT: String(n + 1),
    [`GIT_CONFIG_KEY_${n}`]: 'core.splitIndex',
    [`GIT_CONFIG_VALUE_${n}`]: 'false',
  };
}

/**
 * Writes the tree of the index `indexPath` of the repository whose git directory is `gitDir`
 * (absolute), from an empty directory made (and removed) under `scratchParent`. The index gains
 * the trees as its cache (so the next write-tree of a copy recomputes only what changed).
 *
 * @returns the tree object id (hex).
 * @throws BatonError `git_failed` as `runGit` (e.g. a blob the index names is missing).
 */
export async function writeIndexTree(
  indexPath: string,
  gitDir: string,
  scratchParent: string,
  options: IndexTreeOptions = {},
): Promise<string> {
  const before = options.keepRacyEntries ? await stat(indexPath) : undefined;
  const empty = await mkdtemp(join(scratchParent, 'no-worktree-'));
  try {
    const written = await runGit(['write-tree'], {
      cwd: empty,
      timeoutMs: options.timeoutMs ?? 120_000,
      ...(options.path ? { path: options.path } : {}),
      ...(options.niceness ? { niceness: options.niceness } : {}),
      env: { GIT_DIR: gitDir, GIT_WORK_TREE: empty, GIT_INDEX_FILE: indexPath },
      // No file is read, so no filter can run; the split-index pin still matters.
      filterOverrides: privateIndex({}),
    });
    if (before) await utimes(indexPath, before.atime, Math.floor(before.mtimeMs / 1000));
    return written.stdout.trim();
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}
