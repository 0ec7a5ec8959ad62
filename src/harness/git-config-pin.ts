/**
 * Telling, without starting git, that no config file git would read names a filter driver, an
 * include or a worktree: then the launch snapshot skips asking git for them (see
 * {@link pinConfigWithoutFilters}).
 */
import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { processGitHost, type GitHost } from './git-host.js';

/** Config files larger than this are not read by {@link pinConfigWithoutFilters}: 1 MiB. */
const QUIET_CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * The environment that pins git to config files none of which can name anything
 * {@link readFilterOverridesAndWorktree} asks git for, found without starting git; undefined when
 * one might (then ask git). On the 2-core machine each git process costs baton ~10 ms (the fork of
 * a ~120 MB process), and the launch snapshot runs while the CLI starts.
 *
 * For a git command run with `GIT_DIR=gitDir` (absolute and real) and `GIT_WORK_TREE` set, so git
 * reads this directory's config and no other whatever its own discovery would find, in this
 * module's environment (no system config). The files are `<gitDir>/config` and
 * `<gitDir>/config.worktree` (never followed through a symlink: the repository is untrusted, and
 * a link such as `/proc/self/cwd/…` names one file for git and another here), and the global
 * config (git-config(1) FILES: `~/.gitconfig` and `~/.config/git/config`; `XDG_CONFIG_HOME` never
 * reaches git here). The global file read is pinned by its real path as `GIT_CONFIG_GLOBAL`
 * (`/dev/null` when there is none), so git reads exactly the file checked, however it is linked;
 * when both global files exist (GIT_CONFIG_GLOBAL names one) git is asked.
 *
 * Conservative by design: undefined when a file holds the letters `filter`, `include` or
 * `worktree` in any case anywhere (a comment too) — a filter section, an include (whose target
 * could hold one) and `core.worktree` cannot be written without them, as git's config syntax
 * allows only letters, digits and `-` in section and key names (config.c) — when a file is no
 * regular file, is larger than {@link QUIET_CONFIG_MAX_BYTES} or cannot be read (ENOENT is an
 * absent file), for a relative `HOME`, and for a linked worktree's git directory (a `commondir`
 * file: its config lives where that names).
 *
 * @param host the `HOME` git will run with ({@link GitOptions.host}); default this process's.
 * @returns `{ GIT_CONFIG_GLOBAL }` to add to the command's environment, or undefined.
 */
export async function pinConfigWithoutFilters(
  gitDir: string,
  host: GitHost = processGitHost(),
): Promise<{ GIT_CONFIG_GLOBAL: string } | undefined> {
  const home = host.HOME ?? '/';
  if (!isAbsolute(home) || !isAbsolute(gitDir)) return undefined;
  if (await exists(join(gitDir, 'commondir'))) return undefined;
  const globals = await Promise.all([join(home, '.gitconfig'), join(home, '.config', 'git', 'config')].map(realGlobal));
  if (globals.includes(null)) return undefined;
  const present = globals.filter((path): path is string => path !== undefined);
  if (present.length > 1) return undefined;
  const global = present[0] ?? '/dev/null';
  const texts = await Promise.all([
    readConfigText(join(gitDir, 'config')),
    readConfigText(join(gitDir, 'config.worktree')),
    present[0] ? readConfigText(present[0]) : '',
  ]);
  return texts.every((text) => text !== undefined && !/filter|include|worktree/i.test(text))
    ? { GIT_CONFIG_GLOBAL: global }
    : undefined;
}

/** The real path of a global config file; undefined when there is none, null when it cannot be told. */
async function realGlobal(path: string): Promise<string | undefined | null> {
  return realpath(path).then(
    (real) => real,
    (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? undefined : null),
  );
}

/**
 * `path` as latin1 text ('' when absent); undefined when it is no regular file, too large or
 * unreadable, or a symlink.
 */
async function readConfigText(path: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted as a config file must not hang the launch. O_NOFOLLOW: a
    // symlink fails with ELOOP, so the caller asks git.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? '' : undefined;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > QUIET_CONFIG_MAX_BYTES) return undefined;
    const bytes = await handle.readFile();
    return bytes.length > QUIET_CONFIG_MAX_BYTES ? undefined : bytes.toString('latin1');
  } catch {
    // Unreadable: the caller asks git instead, which reports what is wrong with the file.
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Whether `path` exists (anything but ENOENT/ENOTDIR counts as existing: the caller then asks git). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT' && err.code !== 'ENOTDIR',
  );
}
