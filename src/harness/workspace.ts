/**
 * The workspace gate: a run's directory must resolve, symlinks followed,
 * inside a granted workspace root. Also finds the worktree root that the lock domain keys on.
 */
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BatonError } from '../core/errors.js';

/** What the gate needs to know of the configuration. */
export interface WorkspaceSettings {
  /** Absolute roots runs may use. */
  roots: readonly string[];
  /** Absolute default cwd, if any. */
  defaultCwd: string | undefined;
  /** Alias → absolute path. */
  projects: ReadonlyMap<string, string>;
  /** Home directory for `~` in chat-given paths. */
  homeDir: string;
  /**
   * Absolute directories no run's directory may contain or lie in: `$BATON_HOME`, `CODEX_HOME`,
   * `CLAUDE_CONFIG_DIR`. @default none
   */
  protectedDirs?: readonly string[];
  /**
   * Absolute directories baton owns and makes run directories in: `$BATON_HOME/worktrees`.
   * A directory at least two levels below one (`<repo>/<run id>`) passes the
   * workspace gate and may lie in a protected directory, since it holds none. @default none
   */
  ownedRoots?: readonly string[];
}

/** A run directory that passed the gate. */
export interface ResolvedWorkspace {
  /** Real path of the run's cwd. */
  cwd: string;
  /** Top of the git checkout holding `cwd`, or `cwd` itself outside git. */
  worktreeRoot: string;
}

/**
 * Resolves where a run goes: `in:` (an alias, else a path), else the conversation's default,
 * else `[workspace] default`.
 *
 * @throws BatonError `usage` when no directory is given or configured; `unknown_alias` for a
 *   bare word that is no alias and no existing path; `cwd_missing` when the path does not exist
 *   or is not a directory; `outside_workspace` when it is outside every root.
 */
export async function resolveWorkspace(
  requested: string | undefined,
  conversationDefault: string | undefined,
  settings: WorkspaceSettings,
): Promise<ResolvedWorkspace> {
  const target = requested ?? conversationDefault ?? settings.defaultCwd;
  if (target === undefined) {
    throw new BatonError(
      'usage',
      'No working directory: say where, e.g. in:~/code/app or in:ALIAS, set one with /use, or set [workspace] default in config.toml.',
    );
  }
  const aliased = settings.projects.get(target);
  const path = aliased ?? expandPath(target, settings.homeDir);
  if (!aliased && !isAbsolute(target) && !target.startsWith('~')) {
    throw new BatonError(
      'unknown_alias',
      `"${target}" is not a project alias. Use an absolute path (in:/path or in:~/path) or add it under [projects] in config.toml.`,
    );
  }
  const cwd = await realDirectory(path);
  const owned = await inOwnedRoot(cwd, settings.ownedRoots ?? []);
  if (!owned) await assertInsideRoots(cwd, settings.roots);
  await assertHoldsNoConfig(cwd, settings.protectedDirs ?? [], owned);
  return { cwd, worktreeRoot: await findWorktreeRoot(cwd) };
}

/**
 * Refuses `path` (already real) unless it is inside a root (each root's symlinks followed too).
 *
 * @throws BatonError `outside_workspace`.
 */
export async function assertInsideRoots(path: string, roots: readonly string[]): Promise<void> {
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot && isInside(path, realRoot)) return;
  }
  throw new BatonError(
    'outside_workspace',
    `${path} is outside the workspace. Grant it with \`baton grant path DIR\` (or add it to [workspace] roots in config.toml), then send the command again.`,
    { details: { path } },
  );
}

/**
 * Refuses a run directory that contains, or lies in, baton's home or a CLI's home: the agent may
 * write below its directory (codex `workspace-write`, claude `acceptEdits`), and one tool call
 * there could plant a hook in claude's user settings (run unsandboxed by the next claude run) or
 * rewrite baton's config. codex keeps only `.codex` and `.git` read-only.
 *
 * @param cwd the run's directory, already real.
 * @param inOwnedRoot `cwd` is a run worktree in a root baton owns (`$BATON_HOME/worktrees`): it
 *   may lie in `$BATON_HOME`, but still must not contain a protected directory.
 * @throws BatonError `cwd_holds_config`.
 */
export async function assertHoldsNoConfig(
  cwd: string,
  protectedDirs: readonly string[],
  inOwnedRoot = false,
): Promise<void> {
  for (const dir of protectedDirs) {
    const real = await realpath(dir).catch(() => resolve(dir));
    if (isInside(real, cwd) || (!inOwnedRoot && isInside(cwd, real))) {
      throw new BatonError(
        'cwd_holds_config',
        `${cwd} holds ${real}, baton's or a coding CLI's own configuration, which a run there could rewrite. Run in a project directory below it instead (e.g. in:~/code/app).`,
        { details: { cwd, protectedDir: real } },
      );
    }
  }
}

/** True when `cwd` (real) lies two or more levels below one of `ownedRoots` (each made real). */
async function inOwnedRoot(cwd: string, ownedRoots: readonly string[]): Promise<boolean> {
  for (const root of ownedRoots) {
    const real = await realpath(root).catch(() => undefined);
    if (real && isInside(cwd, real) && relative(real, cwd).split(sep).length >= 2) return true;
  }
  return false;
}

/** True when `path` equals `root` or lies below it. Both must be normalized absolute paths. */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function expandPath(value: string, homeDir: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/')) return resolve(homeDir, value.slice(2));
  return resolve(value);
}

async function realDirectory(path: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    throw new BatonError('cwd_missing', `${path} does not exist. Check the path, or create the directory first.`, {
      cause: err,
      details: { path },
    });
  }
  if (!(await stat(real)).isDirectory()) {
    throw new BatonError('cwd_missing', `${path} is not a directory.`, { details: { path } });
  }
  return real;
}

/**
 * The top of the git working tree holding `cwd` — what `git rev-parse --show-toplevel` prints —
 * or `cwd` itself outside one. Found the way git discovers a repository (setup.c), without
 * running git, which cost a process start on every launch (~10-20 ms): from `cwd`
 * up, the first directory whose `.git` is a git directory (`HEAD`, `objects/`, `refs/`) or a
 * gitfile (`gitdir: <path>`, a linked worktree or submodule) pointing at one is the top. A `.git`
 * file that is no such gitfile makes git fail, so `cwd` is returned; a `.git` directory that is no
 * git directory is passed over, as git does; inside a git directory itself (a bare repository)
 * there is no working tree (`cwd`). Not followed: `GIT_DIR`/`GIT_WORK_TREE`/
 * `GIT_CEILING_DIRECTORIES` in baton's environment, `core.worktree`, and git's refusal of a
 * repository owned by another user (which made this `cwd`, a narrower lock domain).
 *
 * @param cwd an absolute, real directory (each parent of it is then real too).
 */
export async function findWorktreeRoot(cwd: string): Promise<string> {
  return (await discoverRepository(cwd))?.top ?? cwd;
}

/**
 * The working tree holding `cwd` and its git directory, found as {@link findWorktreeRoot} finds
 * it (same limits); undefined outside a working tree.
 *
 * @returns `top` (what `git rev-parse --show-toplevel` prints) and `gitDir` (absolute: `<top>/.git`,
 *   or the directory a gitfile names), where the working tree's own `index` file lives.
 */
export async function discoverRepository(cwd: string): Promise<{ top: string; gitDir: string } | undefined> {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const entry = join(dir, '.git');
    const stats = await stat(entry).catch(() => undefined);
    if (stats?.isDirectory() && (await isGitDirectory(entry))) return { top: dir, gitDir: entry };
    if (stats?.isFile()) {
      const gitDir = await gitfileTarget(entry, dir);
      return gitDir ? { top: dir, gitDir } : undefined;
    }
    if (await isGitDirectory(dir)) return undefined;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * git's `is_git_directory`: `HEAD` is a file (or symlink), `objects/` and `refs/` are directories
 * — in the directory its `commondir` file names, for a linked worktree's git directory.
 */
async function isGitDirectory(dir: string): Promise<boolean> {
  const head = await lstat(join(dir, 'HEAD')).catch(() => undefined);
  if (!head || !(head.isFile() || head.isSymbolicLink())) return false;
  const commondir = (await readFile(join(dir, 'commondir'), 'utf8').catch(() => '')).trim();
  const common = commondir ? resolve(dir, commondir) : dir;
  const [objects, refs] = await Promise.all(
    ['objects', 'refs'].map((name) => stat(join(common, name)).catch(() => undefined)),
  );
  return Boolean(objects?.isDirectory() && refs?.isDirectory());
}

/** The directory the gitfile `path` names (`gitdir: <dir>`, relative to `base`) when it is a git directory. */
async function gitfileTarget(path: string, base: string): Promise<string | undefined> {
  // A gitfile is one short line; a large or unreadable `.git` file is no gitfile.
  const text = await readFile(path, 'utf8').catch(() => '');
  const match = /^gitdir: (.+?)\r?\n?$/.exec(text.slice(0, 4096));
  if (!match) return undefined;
  const gitDir = resolve(base, match[1]!);
  return (await isGitDirectory(gitDir)) ? gitDir : undefined;
}
