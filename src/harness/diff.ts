/**
 * What a run changed in its working tree: a snapshot of the tree is taken at launch,
 * while the CLI starts and before it has its task, and again at the end; the diff of
 * the two is the run's own change, so changes that were already there at launch are not
 * attributed to it.
 *
 * A snapshot never touches the user's index or working tree: it is a private index
 * (`GIT_INDEX_FILE=<run dir>/<name>.index`) seeded from a copy of the user's index (so only files
 * whose stat changed are read and hashed), then `git add -A` (untracked files count, ignored ones
 * do not). Its tree (`git write-tree` of that index) is written once the CLI has its task, off the
 * working tree ({@link beginSnapshotTree}, `index-tree.ts`): not beside the CLI's start, and not at
 * the run's end, whose snapshot is then seeded from the launch index (its stat data and cached
 * trees are the launch's, so git re-hashes only files changed since and recomputes only the
 * directories that changed). Without it (the task never sent, or that git failed) the end seeds
 * from the user's index and writes both trees itself. It writes blobs and trees
 * into the repository's object store, as `git stash` would. Every git call goes through
 * {@link runGit}, which switches off the commands a hostile repository config could name.
 */
import { chmod, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isBatonError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { runGit, type GitOptions } from './git.js';
import { pinConfigWithoutFilters } from './git-config-pin.js';
import { readFilterOverrides, readFilterOverridesAndWorktree } from './git-filter-overrides.js';
import { discoverRepository } from './workspace.js';
import { excludePathspecs, filesToLeaveOut, PLAIN_DIFF, type LeftOutFile } from './patch-filter.js';
import { writePatchRecord } from './patch-record.js';
import { privateIndex, writeIndexTree } from './index-tree.js';
import { seeder, type Seeder } from './index-seed.js';

/** A snapshot of a working tree: everything not ignored, staged in a private index. */
export interface TreeSnapshot {
  /** The worktree's top directory (`git rev-parse --show-toplevel`). */
  toplevel: string;
  /** The private index holding the snapshot (the file must stay until {@link treeOf} has read it). */
  indexPath: string;
  /** The repository's git directory (absolute), when known: its tree is then written off the working tree. */
  gitDir?: string;
  /**
   * The snapshot's tree, begun once the CLI had its task ({@link beginSnapshotTree}); resolves to
   * undefined when that failed (the diff then writes it the old way). Never rejects.
   */
  tree?: Promise<string | undefined>;
}

/** Options of {@link snapshotTree}. */
export interface SnapshotOptions {
  /** `PATH` to find git on. Default: this process's. */
  path?: string;
  /** Kill git after this many ms. @default 120_000 */
  timeoutMs?: number;
  /**
   * Nice value for the git processes (0–19): the launch snapshot runs beside the CLI's start and
   * yields the CPU to it. @default 0 (this process's own)
   */
  niceness?: number;
}

/**
 * Snapshots the working tree `cwd` belongs to, through the private index `indexPath`.
 *
 * @returns undefined when `cwd` is not in a git working tree (no diff, no error).
 * @throws BatonError `git_failed` when git fails or times out in a working tree.
 */
export async function snapshotTree(
  cwd: string,
  indexPath: string,
  options: SnapshotOptions = {},
): Promise<TreeSnapshot | undefined> {
  return (await stageTree(cwd, indexPath, options, { checkConfigWithoutGit: true }))?.snapshot;
}

/**
 * {@link snapshotTree}, with the filter-driver blanking it read (for more git commands on the
 * tree as it is now; the config may change later).
 */
async function stageTree(
  cwd: string,
  indexPath: string,
  options: SnapshotOptions,
  how: { checkConfigWithoutGit?: boolean; seedFrom?: string } = {},
): Promise<{ snapshot: TreeSnapshot; filters: Record<string, string> } | undefined> {
  const base = gitOptions(cwd, options);
  const found = await discoverRepository(cwd);
  const seed = seeder(indexPath, how.seedFrom);
  const staged = found ? await stageDiscovered(seed, base, found, how.checkConfigWithoutGit ?? false) : undefined;
  if (staged) return staged;
  // It runs beside the CLI's start and the CLI waits for it: the filter drivers are
  // read once for the commands that convert content (add), at the same time as the one rev-parse
  // that answers both questions — rev-parse converts no content, so no filter driver runs in it.
  const [filters, top] = await Promise.all([
    readFilterOverrides(base),
    runGit(['rev-parse', '--show-toplevel', '--git-path', 'index', '--absolute-git-dir'], {
      ...base,
      filterOverrides: {},
      allowFailure: true,
    }),
  ]);
  const [toplevel = '', indexLine = '', gitDir = ''] = top.stdout.split('\n').map((line) => line.trim());
  if (top.exitCode !== 0 || toplevel === '' || indexLine === '') return undefined;
  const inTree: GitOptions = {
    ...base,
    cwd: toplevel,
    env: { GIT_INDEX_FILE: indexPath },
    filterOverrides: privateIndex(filters),
  };
  // --git-path prints a path relative to the directory git ran in.
  const userIndex = resolve(cwd, indexLine);
  // A copy that git cannot use (a split index, a version it refuses) is replaced by an empty one,
  // which costs a full hash of the tree.
  const seeded = await seed(userIndex);
  let added = await runGit(['add', '-A'], { ...inTree, allowFailure: seeded });
  if (added.exitCode !== 0) {
    await rm(indexPath, { force: true });
    added = await runGit(['add', '-A'], inTree);
  }
  return { snapshot: { toplevel, indexPath, ...(gitDir ? { gitDir } : {}) }, filters };
}

/**
 * {@link stageTree} in two git process starts instead of three, when the working tree and its git
 * directory were found without git ({@link discoverRepository}, as git discovers them): the CLI
 * waits for the launch snapshot (its task follows it), and each process start is a fork of the
 * whole service, whose cost grows with its RSS (docs/decisions/launch-path.md). Forks are serial in baton's thread, so running
 * the rev-parse beside `add` saved nothing; it is left out. The user's index is copied while the
 * filter drivers are read, then `add -A` runs in the top found. For the launch snapshot
 * (`checkConfigWithoutGit`) the listing of filter drivers is skipped too when
 * {@link pinConfigWithoutFilters} finds none to blank: one git process.
 *
 * @returns undefined when `add` failed (git refused the repository the discovery found, or the
 *   seeded index): the snapshot is then taken the long way, which asks git for the top.
 */
async function stageDiscovered(
  seed: Seeder,
  base: GitOptions,
  found: { top: string; gitDir: string },
  checkConfigWithoutGit: boolean,
): Promise<{ snapshot: TreeSnapshot; filters: Record<string, string> } | undefined> {
  // Read where `add` runs, not in the run's cwd: git may find another repository from cwd than
  // the discovery did (a `.git` git accepts and the discovery passes over, e.g. an executable
  // regular file `objects`), and the drivers blanked must be those of the config `add` reads.
  const inTop: GitOptions = { ...base, cwd: found.top };
  // The launch snapshot (only it: the CLI waits for it) takes one git process instead of two when
  // no config git reads can name a filter driver, an include or core.worktree: `add` then runs
  // pinned to the git directory and top found (GIT_DIR, GIT_WORK_TREE), so git reads exactly the
  // config checked. A repository git refuses there (one the discovery accepts and git does not)
  // fails `add`, and the two-process way runs. The end snapshot never takes this way: its filter
  // blanking, read by git, also serves the write-trees and diffs that run without GIT_DIR.
  // Checked and pinned by its real path: a symlink on the way (`.git` -> `/proc/self/cwd/…`) can
  // name one directory for this process and another for git, which runs in the top.
  const realGitDir = checkConfigWithoutGit ? await realpath(found.gitDir).catch(() => undefined) : undefined;
  const pinnedGlobal = realGitDir === undefined ? undefined : await pinConfigWithoutFilters(realGitDir, base.host);
  const indexPath = seed.indexPath;
  if (realGitDir !== undefined && pinnedGlobal !== undefined) {
    await seed(join(realGitDir, 'index'));
    const pinned = { GIT_DIR: realGitDir, GIT_WORK_TREE: found.top, GIT_INDEX_FILE: indexPath, ...pinnedGlobal };
    const quiet = await runGit(['add', '-A'], {
      ...inTop,
      env: pinned,
      filterOverrides: privateIndex({}),
      allowFailure: true,
    });
    if (quiet.exitCode === 0) return { snapshot: { toplevel: found.top, indexPath, gitDir: realGitDir }, filters: {} };
  }
  const configRead = readFilterOverridesAndWorktree(inTop);
  await seed(join(found.gitDir, 'index'));
  const { overrides: filters, worktree } = await configRead;
  // core.worktree moves git's working tree away from the top found (the repository's config may
  // name any directory baton can read): `add` would stage that directory and the run's diff would
  // be its change, not the run's. Unless it names the top found (a submodule's git directory
  // does), asking git for the top is the long way's business.
  if (worktree !== undefined && (await physicalPath(found.gitDir, worktree)) !== found.top) {
    await rm(indexPath, { force: true });
    return undefined;
  }
  const added = await runGit(['add', '-A'], {
    ...inTop,
    env: { GIT_INDEX_FILE: indexPath },
    filterOverrides: privateIndex(filters),
    allowFailure: true,
  });
  if (added.exitCode === 0) return { snapshot: { toplevel: found.top, indexPath, gitDir: found.gitDir }, filters };
  await rm(indexPath, { force: true });
  return undefined;
}

/**
 * `path` (relative to `dir` unless absolute) as git resolves core.worktree: physically, a `..`
 * after a symlink climbing from the link's target (realpath(3)), never lexically as
 * path.resolve would; undefined when it does not exist.
 */
async function physicalPath(dir: string, path: string): Promise<string | undefined> {
  return realpath(isAbsolute(path) ? path : `${dir}/${path}`).catch(() => undefined);
}

/** The {@link GitOptions} of `options` for a git command in `cwd`. */
function gitOptions(cwd: string, options: SnapshotOptions): GitOptions {
  return {
    cwd,
    timeoutMs: options.timeoutMs ?? 120_000,
    ...(options.path ? { path: options.path } : {}),
    ...(options.niceness ? { niceness: options.niceness } : {}),
  };
}

/**
 * The tree object id (hex) of a snapshot: `git write-tree` of its index, off the working tree
 * ({@link writeIndexTree}) when its git directory is known, else (or when that failed) in it.
 *
 * @throws BatonError `git_failed` as {@link runGit}.
 */
async function treeOf(
  snapshot: TreeSnapshot,
  options: SnapshotOptions,
  filters: Record<string, string>,
): Promise<string> {
  if (snapshot.gitDir !== undefined) {
    const tree = await writeIndexTree(snapshot.indexPath, snapshot.gitDir, dirname(snapshot.indexPath), options).catch(
      () => undefined,
    );
    if (tree) return tree;
  }
  // Not free of filters: writing the index back, write-tree re-hashes each racily clean entry
  // (mtime not older than the index) from the working tree, through the clean filter. So it gets
  // the blanking of the drivers the config names now (`filters`, read at the run's end: the
  // agent may have added one during the run).
  const written = await runGit(['write-tree'], {
    ...gitOptions(snapshot.toplevel, options),
    env: { GIT_INDEX_FILE: snapshot.indexPath },
    filterOverrides: privateIndex(filters),
  });
  return written.stdout.trim();
}

/**
 * Begins writing the launch snapshot's tree ({@link TreeSnapshot.tree}) in the background, off
 * the working tree, so the run's end does not: meant for once the CLI has its task (the git
 * process is one more fork of the service, which the launch path does not wait for). The index
 * keeps its racily clean entries as such (it seeds the end snapshot). Nothing is begun when the
 * git directory is unknown.
 */
export function beginSnapshotTree(snapshot: TreeSnapshot, options: SnapshotOptions = {}): void {
  if (snapshot.gitDir === undefined || snapshot.tree !== undefined) return;
  snapshot.tree = writeIndexTree(snapshot.indexPath, snapshot.gitDir, dirname(snapshot.indexPath), {
    ...options,
    keepRacyEntries: true,
  }).catch(() => undefined);
}

/** A run's change between two snapshots. */
export interface RunDiff {
  /** `git diff --stat` of the change, at most {@link STAT_FILES} files and the summary line. */
  stat: string;
  /** The summary line, e.g. `2 files changed, 3 insertions(+), 1 deletion(-)`. */
  summary: string;
  /** Where the full diff (`--binary`, applies with `git apply`) was written; undefined when over the cap or not made. */
  patchPath?: string;
  /** Size of the full diff, in bytes, when it was made. */
  patchBytes?: number;
  /** Why there is no patch file, in words, when there is none. */
  patchMissing?: string;
  /**
   * Files of the change not in the patch (ignored before the run, or secret-looking by name or
   * content), sorted by path; absent when none. `baton patch ID --include-ignored` gives them.
   */
  leftOut?: LeftOutFile[];
}

/** Files listed in the stat. */
export const STAT_FILES = 8;

/**
 * Diffs the tree at launch with the tree now and writes the patch to `patchPath` (0600), as git's
 * bytes, without the files {@link filesToLeaveOut} names (listed in {@link RunDiff.leftOut}). The
 * two trees are recorded beside it (see `patch-record.ts`) for `baton patch`.
 *
 * @param maxPatchBytes - the patch cap (`[harness] max_patch_kb`); over it no file is written.
 * @returns undefined when nothing changed.
 * @throws BatonError `git_failed` when the end snapshot or the stat fails.
 */
export async function diffSinceSnapshot(
  start: TreeSnapshot,
  endIndexPath: string,
  patchPath: string,
  maxPatchBytes: number,
  logger: Logger,
  options: SnapshotOptions = {},
): Promise<RunDiff | undefined> {
  // The end snapshot's filter blanking (read after the run, so after the agent's last chance to
  // name a driver) serves both write-trees.
  // The launch index seeds the end one once its tree is known: only what changed since the
  // launch is re-read and re-hashed, and only the directories that changed get new trees.
  const knownStartTree = await start.tree;
  const end = await stageTree(
    start.toplevel,
    endIndexPath,
    options,
    knownStartTree ? { seedFrom: start.indexPath } : {},
  );
  if (!end) return undefined;
  const [startTree, endTree] = await Promise.all([
    knownStartTree ?? treeOf(start, options, end.filters),
    treeOf(end.snapshot, options, end.filters),
  ]);
  if (endTree === startTree) return undefined;
  const base = gitOptions(start.toplevel, options);
  const statOut = (
    await runGit(['diff', ...PLAIN_DIFF, `--stat=72`, `--stat-count=${STAT_FILES}`, startTree, endTree], base)
  ).stdout;
  const statLines = statOut.split('\n').filter((line) => line.trim() !== '');
  const summary = statLines.at(-1)?.trim() ?? '';
  const diff: RunDiff = { stat: statLines.join('\n'), summary };
  try {
    const runDir = dirname(patchPath);
    const leftOut = await filesToLeaveOut(startTree, endTree, base, runDir);
    if (leftOut.length > 0) diff.leftOut = leftOut;
    await writePatchRecord(runDir, { toplevel: start.toplevel, startTree, endTree, leftOut });
    const patch = await runGit(
      ['diff', ...PLAIN_DIFF, '--binary', '--full-index', startTree, endTree, ...excludePathspecs(leftOut)],
      {
        ...base,
        maxBufferBytes: Math.max(maxPatchBytes * 4, 16 * 1024 * 1024),
        binaryStdout: true,
      },
    );
    const bytes = patch.stdoutBytes!.length;
    diff.patchBytes = bytes;
    if (bytes === 0) {
      diff.patchMissing = 'every changed file is left out of the patch';
    } else if (bytes > maxPatchBytes) {
      diff.patchMissing = `the full diff is ${formatKiB(bytes)}, over [harness] max_patch_kb (${formatKiB(maxPatchBytes)}), so it is not attached`;
    } else {
      await writeFile(patchPath, patch.stdoutBytes!, { mode: 0o600 });
      await chmod(patchPath, 0o600);
      diff.patchPath = patchPath;
    }
  } catch (err) {
    logger.warn({ err, cwd: start.toplevel }, 'could not make the full diff of a run');
    diff.patchMissing = isBatonError(err, 'patch_unavailable')
      ? err.message
      : 'the full diff could not be made (too large, or git failed; see the log)';
  }
  return diff;
}

/** File names inside a run directory. */
export const SNAPSHOT_FILES = { start: 'snapshot.index', end: 'snapshot-end.index' } as const;

/** `12.5 KiB` */
function formatKiB(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Removes the private index files of a run (they are large and not needed after the diff). */
export async function removeSnapshotIndexes(runDir: string): Promise<void> {
  await Promise.all(Object.values(SNAPSHOT_FILES).map((name) => rm(join(runDir, name), { force: true })));
}
