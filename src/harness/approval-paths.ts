/**
 * Where a path a tool call names really is, relative to the run: inside the run's directory, or
 * in a place whose files run code or hold secrets whatever the run (baton's own files, the CLI
 * homes, the home's dotfiles, git's hooks and config). Symbolic links and `..` are resolved first,
 * so a link inside the project that points out of it counts as outside.
 */
import { lstat, readlink, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { runGit } from './git.js';

/** Where the paths of one run are judged from. */
export interface PathScope {
  /** The run's directory (its worktree, or the checkout it runs in). */
  cwd: string;
  /** The home directory of the user baton runs as: `~` in a command, and its dotfiles. */
  homeDir: string;
  /** `$BATON_HOME` and the CLI homes (codex, claude): baton's own files. */
  protectedDirs: readonly string[];
}

/**
 * Why a path is never covered by an earlier "Allow for this run": the words the card shows.
 * - `baton's own files`: under `$BATON_HOME` or a CLI home (codex, claude);
 * - `outside the project`: outside the run's directory;
 * - `git's hooks and config`: under a `.git` in the project, or under a hooks directory the
 *   repository's config names (`core.hooksPath`, e.g. husky's `.husky`): code git runs;
 * - `settings in your home`: a dotfile or dot-directory of the home (shell start-up files, `~/.ssh`, `~/.config`…);
 * - `a file linked from elsewhere`: an existing file with more than one hard link.
 */
export type PathMark =
  | "baton's own files"
  | 'outside the project'
  | "git's hooks and config"
  | 'settings in your home'
  | 'a file linked from elsewhere';

/** Longest chain of symbolic links followed before a path counts as outside. */
const MAX_LINKS = 40;

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The real location of `path` (absolute), whether or not it exists, resolved the way the kernel
 * does: one component at a time, a symbolic link by its target (a dangling one too: a write
 * lands there), `..` after a link from the link's target. From the first missing component on,
 * the rest is taken as written.
 *
 * @returns undefined when the links loop or go deeper than {@link MAX_LINKS}.
 */
export async function realLocation(path: string): Promise<string | undefined> {
  let links = 0;
  const walk = async (start: string, parts: readonly string[]): Promise<string | undefined> => {
    let current = start;
    for (let i = 0; i < parts.length; i += 1) {
      const part = parts[i]!;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        current = dirname(current);
        continue;
      }
      const next = join(current, part);
      const info = await lstat(next).catch(() => undefined);
      if (!info) return resolve(next, ...parts.slice(i + 1));
      if (!info.isSymbolicLink()) {
        current = next;
        continue;
      }
      links += 1;
      const target = links > MAX_LINKS ? undefined : await readlink(next).catch(() => undefined);
      if (target === undefined) return undefined;
      const followed = await walk(isAbsolute(target) ? '/' : current, target.split('/'));
      if (followed === undefined) return undefined;
      current = followed;
    }
    return current;
  };
  return walk('/', path.split('/'));
}

/** `~` and `~/…` as the home; any other path as given. */
export function expandHome(path: string, homeDir: string): string {
  return path === '~' ? homeDir : path.startsWith('~/') ? join(homeDir, path.slice(2)) : path;
}

/**
 * Why `path` (absolute, or relative to the run's directory; `~` is the home) is never covered by
 * an "Allow for this run", or undefined when it is inside the run's directory and none of the
 * always-asked places.
 */
export async function markOfPath(path: string, scope: PathScope): Promise<PathMark | undefined> {
  const expanded = expandHome(path, scope.homeDir);
  // Not path.resolve: it drops `..` before the links are followed, where the kernel follows them first.
  const real = await realLocation(isAbsolute(expanded) ? expanded : `${scope.cwd}/${expanded}`);
  const cwd = (await realLocation(resolve(scope.cwd))) ?? resolve(scope.cwd);
  const home = (await realLocation(resolve(scope.homeDir))) ?? resolve(scope.homeDir);
  const protectedDirs = await Promise.all(
    scope.protectedDirs.map(async (d) => (await realLocation(resolve(d))) ?? resolve(d)),
  );
  if (real === undefined) return 'outside the project';
  // A run may live under a protected directory (its worktree under $BATON_HOME/worktrees): that
  // directory then leaves the run's own files alone; the rest of it stays asked.
  const owned = protectedDirs.some((d) => isInside(real, d) && !isInside(cwd, d));
  if (!isInside(real, cwd))
    return owned || protectedDirs.some((d) => isInside(real, d)) ? "baton's own files" : 'outside the project';
  if (owned) return "baton's own files";
  if (relative(cwd, real).split(sep).includes('.git')) return "git's hooks and config";
  // A hooks directory inside the project (husky's `.husky`) holds code the next `git commit` runs,
  // a command the run may hold an "Allow for this run" for; read anew each time, since an allowed
  // command (`npm install` running husky) can set it during the run.
  for (const hooks of await configuredHooksDirs(cwd)) if (isInside(real, hooks)) return "git's hooks and config";
  // The run's directory may be the home itself (or hold it): its dotfiles still ask.
  const top = isInside(real, home) && real !== home ? relative(home, real).split(sep)[0]! : '';
  if (top.startsWith('.') && !isInside(cwd, join(home, top))) return 'settings in your home';
  const file = await stat(real).catch(() => undefined);
  if (file?.isFile() && file.nlink > 1) return 'a file linked from elsewhere';
  return undefined;
}

/**
 * The hooks directories the repository at `cwd` names with `core.hooksPath` in its own config
 * files (every scope but baton's command line, which turns hooks off for baton's own git calls),
 * symbolic links resolved; a relative one from the worktree's top, where git runs hooks. Empty
 * when `cwd` is no repository or none is set.
 *
 * @throws BatonError `git_failed` when git cannot be run at all.
 */
export async function configuredHooksDirs(cwd: string): Promise<string[]> {
  const listed = await runGit(['config', '-z', '--show-scope', '--path', '--get-all', 'core.hooksPath'], {
    cwd,
    allowFailure: true,
  });
  if (listed.exitCode !== 0) return []; // 1: not set; 128 and others: not a repository
  const fields = listed.stdout.split('\0');
  const values: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2)
    if (fields[i] !== 'command' && fields[i + 1]) values.push(fields[i + 1]!);
  if (values.length === 0) return [];
  let top: string | undefined;
  const dirs: string[] = [];
  for (const value of values) {
    if (!isAbsolute(value) && top === undefined) {
      const shown = await runGit(['rev-parse', '--show-toplevel'], { cwd, allowFailure: true });
      // No work tree (the run's directory is inside .git itself, already asked): from here.
      top = shown.exitCode === 0 && shown.stdout.trim() !== '' ? shown.stdout.trim() : resolve(cwd);
    }
    const absolute = isAbsolute(value) ? value : join(top!, value);
    dirs.push((await realLocation(absolute)) ?? resolve(absolute));
  }
  return dirs;
}
