/**
 * Runs `git` in a repository baton does not trust.
 *
 * A repository's own `.git/config` (and any file it includes) can name commands that git runs on
 * ordinary operations: `core.fsmonitor` (on `add`, `status`, `diff`), filter drivers'
 * `clean` / `smudge` / `process` (on `add`, `checkout`, `worktree add`), hooks through
 * `core.hooksPath` or `.git/hooks` (`post-checkout` on `worktree add`), `diff.external` and
 * `diff.<driver>.command` / `textconv` (on `diff`). An agent that could write `.git/config`
 * during a run would otherwise get a command run by baton, outside the agent's sandbox, after
 * the run. Every call here therefore:
 * - starts from an environment built from nothing (no inherited `GIT_*`; system config off,
 *   `GIT_CONFIG_GLOBAL` kept only when the caller passes it),
 * - disables fsmonitor, hooks, external diff and pagers on the command line (`-c` wins over
 *   every config file),
 * - lists the filter drivers every config scope defines (includes followed) and blanks each
 *   one's commands (git treats an empty filter command as "no filter"; git 2.39 `convert.c`),
 * - never recurses into submodules.
 *
 * Source of the config keys: git-config(1), gitattributes(5), githooks(5), git 2.39.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { absolutePath } from './spawn-env.js';

/** Options for {@link runGit}. */
export interface GitOptions {
  /** Directory git runs in (the repository or worktree). */
  cwd: string;
  /** `PATH` used to find `git`; only absolute entries are kept. Default: this process's `PATH`. */
  path?: string;
  /** Extra environment (e.g. `GIT_INDEX_FILE` for a private index). `GIT_*` only. */
  env?: Record<string, string>;
  /** Kill git after this many ms. Default 60,000. */
  timeoutMs?: number;
  /** Return a non-zero exit as a result instead of throwing. Default false. */
  allowFailure?: boolean;
  /** Bytes of stdout kept (default 64 MiB); more fails with `git_failed`. */
  maxBufferBytes?: number;
  /**
   * The filter-driver blanking of {@link readFilterOverrides}, already read for this repository
   * by the caller running several git commands in a row (one git process fewer per command);
   * read anew for each command when absent.
   */
  filterOverrides?: Record<string, string>;
  /**
   * Nice value (0–19) git runs at, set right after the spawn (`os.setPriority`): git work that
   * runs beside a CLI's start yields the CPU to it. @default 0: this process's own priority
   */
  niceness?: number;
  /**
   * Keep stdout as git wrote it, in {@link GitResult.stdoutBytes}, and leave `stdout` empty: a
   * patch is bytes (a Latin-1 file's lines are no UTF-8, and decoding them would turn each into
   * U+FFFD, after which the patch no longer applies). @default false
   */
  binaryStdout?: boolean;
  /** A file git reads as its stdin (`cat-file --batch`, `check-ignore --stdin`). @default none */
  stdinPath?: string;
}

/** What {@link runGit} returns. */
export interface GitResult {
  exitCode: number;
  /** stdout decoded as UTF-8; empty with {@link GitOptions.binaryStdout}. */
  stdout: string;
  /** stdout as git wrote it, with {@link GitOptions.binaryStdout} only. */
  stdoutBytes?: Buffer;
  stderr: string;
}

/** `-c` options that switch off every command a config file can name for the operations baton runs. */
const HARDENING = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'diff.external=',
  '-c',
  'core.pager=cat',
  '-c',
  'submodule.recurse=false',
  '-c',
  'core.sshCommand=false',
  '-c',
  'protocol.allow=never',
  '-c',
  'credential.helper=',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

function gitEnv(options: GitOptions): Record<string, string> {
  const env: Record<string, string> = {
    PATH: absolutePath(options.path ?? process.env.PATH ?? '/usr/bin:/bin'),
    HOME: process.env.HOME ?? '/',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_OPTIONAL_LOCKS: '0',
  };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!key.startsWith('GIT_')) throw new TypeError(`runGit: only GIT_* variables may be passed, got ${key}`);
    env[key] = value;
  }
  return env;
}

/** Default of {@link GitOptions.maxBufferBytes}: 64 MiB. */
const DEFAULT_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Starts git with node:child_process, not execa: on the 2-core machine execa's own work around a
 * spawn (its option handling, streams, and the exit handlers it adds and removes per call) cost
 * baton ~4-6 ms of CPU per git process beside the fork, at a ~120 MB heap (40 calls of
 * `git --version` each way). The launch snapshot's git runs while the CLI starts, on the same two
 * cores; a run's end starts several more.
 *
 * @throws BatonError `git_failed` when git cannot be started, is killed by a signal, runs past
 *   `timeoutMs`, or writes more than `maxBufferBytes` to stdout or stderr (it is killed then).
 */
async function exec(args: string[], options: GitOptions): Promise<GitResult> {
  const subcommand = args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? '';
  const limit = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
  const timeoutMs = options.timeoutMs ?? 60_000;
  /** `fix`: what the operator can do; by default for a git that could not start. */
  const fail = (why: string, cause?: unknown, fix = 'Check that git is installed and on PATH.'): BatonError =>
    new BatonError('git_failed', `git ${subcommand} could not run: ${why}. ${fix}`, {
      ...(cause === undefined ? {} : { cause }),
      details: { cwd: options.cwd },
    });
  // Its own process group (detached), so a stop reaches what git started too: a descendant that
  // holds git's stdout or stderr would otherwise keep 'close' from coming, past the time limit.
  const env = gitEnv(options);
  let child: ChildProcess;
  const stdin: FileHandle | undefined =
    options.stdinPath === undefined ? undefined : await open(options.stdinPath, 'r');
  try {
    child = spawn('git', args, {
      cwd: options.cwd,
      env,
      stdio: [stdin?.fd ?? 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
  } catch (error) {
    // Some failures throw instead of an 'error' event (ENOTDIR for a cwd that is a file, E2BIG).
    await stdin?.close();
    throw fail((error as Error).message, error);
  }
  const settled = new Promise<GitResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const bytes = { out: 0, err: 0 };
    let failure: BatonError | undefined;
    const stop = (why: BatonError): void => {
      failure ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      // A descendant outside the group (its own session) may still hold the pipes: stop reading
      // them, so 'close' follows git's own exit.
      child.stdout!.destroy();
      child.stderr!.destroy();
    };
    const timer = setTimeout(
      () =>
        stop(
          fail(
            `timed out after ${timeoutMs} ms`,
            undefined,
            `Check ${options.cwd} for a file git blocks on reading (a FIFO as .git/config, .gitignore or an excludes file) or a tree too large to hash in that time.`,
          ),
        ),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes.out += chunk.length;
      if (bytes.out > limit)
        stop(
          fail(
            `its output passed ${limit} bytes`,
            undefined,
            'Nothing to set: baton keeps no more of it, and a run whose diff it was gets its outcome without the patch.',
          ),
        );
      else out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      bytes.err += chunk.length;
      if (bytes.err > limit)
        stop(
          fail(
            `its error output passed ${limit} bytes`,
            undefined,
            `Run the same git command in ${options.cwd} to see what it reports.`,
          ),
        );
      else err.push(chunk);
    });
    // 'error' without a process (ENOENT, EACCES, a missing cwd) is followed by no 'close'. `on`,
    // not `once`: a later 'error' (a kill the system refused) would otherwise be unhandled and
    // end the service; the first one settles the call.
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(failure ?? fail(error.message, error));
    });
    // 'close', not 'exit': both pipes are drained by then.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code === null)
        return reject(
          fail(
            `killed by ${signal ?? 'a signal'}`,
            undefined,
            'Something outside baton stopped it (the OOM killer, an operator); run the same git command again to see whether it recurs.',
          ),
        );
      // Decoding throws for an output longer than a string can be (~512 MiB, under a large
      // maxBufferBytes): thrown here, in a listener, it would be uncaught and leave this pending.
      try {
        const stderr = Buffer.concat(err).toString('utf8');
        if (options.binaryStdout) resolve({ exitCode: code, stdout: '', stdoutBytes: Buffer.concat(out), stderr });
        else resolve({ exitCode: code, stdout: Buffer.concat(out).toString('utf8'), stderr });
      } catch (error) {
        reject(
          fail(
            `its output could not be kept (${(error as Error).message})`,
            error,
            'Nothing to set: baton keeps no more of it, and a run whose diff it was gets its outcome without the patch.',
          ),
        );
      }
    });
  });
  // The child holds its own copy of the descriptor. Closed only now: an await between the spawn
  // and the listeners above would miss a quick git's 'close', and the call would never settle.
  await stdin?.close();
  if (options.niceness && child.pid !== undefined) {
    try {
      // Never above this process's own nice value: raising a priority needs privilege.
      setPriority(child.pid, Math.max(options.niceness, getPriority()));
    } catch (err) {
      // ESRCH (Node: `ERR_SYSTEM_ERROR`, `info.code`): git has exited already, and its priority
      // no longer matters. Anything else is a fault to report, once git is stopped.
      if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH') {
        child.kill('SIGKILL');
        await settled.catch(() => undefined);
        throw err;
      }
    }
  }
  return settled;
}

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
 * @returns `{ GIT_CONFIG_GLOBAL }` to add to the command's environment, or undefined.
 */
export async function pinConfigWithoutFilters(gitDir: string): Promise<{ GIT_CONFIG_GLOBAL: string } | undefined> {
  const home = process.env.HOME ?? '/';
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

/**
 * The environment overrides (`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`) that blank every filter
 * driver defined in any config scope git would read in `options.cwd` (includes followed); empty
 * when none is defined. {@link runGit} reads them for each command unless the caller passes them
 * in {@link GitOptions.filterOverrides}; read them again after anything may have changed the config.
 *
 * @throws BatonError `git_failed` as {@link runGit}.
 */
export async function readFilterOverrides(options: GitOptions): Promise<Record<string, string>> {
  return (await readFilterOverridesAndWorktree(options)).overrides;
}

/**
 * {@link readFilterOverrides}, and in the same git process the value of `core.worktree` (then
 * git's working tree may not be the directory holding `.git`; relative to the git directory).
 */
export async function readFilterOverridesAndWorktree(
  options: GitOptions,
): Promise<{ overrides: Record<string, string>; worktree: string | undefined }> {
  // -z: each entry is `key\nvalue\0` (`key\0` without a value), so a value holding a newline
  // cannot pass for a key.
  const listed = await exec(
    [...HARDENING, 'config', '--includes', '-z', '--get-regexp', '^(filter\\.|core\\.worktree$)'],
    options,
  );
  // Exit 1: no key matched. Anything else is a broken config git will refuse anyway.
  if (listed.exitCode !== 0) return { overrides: {}, worktree: undefined };
  const drivers = new Set<string>();
  let worktree: string | undefined;
  for (const entry of listed.stdout.split('\0')) {
    const cut = entry.indexOf('\n');
    const key = cut < 0 ? entry : entry.slice(0, cut);
    if (key === 'core.worktree') worktree = cut < 0 ? '' : entry.slice(cut + 1);
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match?.[1]) drivers.add(match[1]);
  }
  // Passed as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n (command scope, like `-c`), never as `-c`:
  // git splits `-c` at the first `=`, so a driver named `x=y` would escape `-c filter.x=y.clean=`.
  const pairs: Array<[string, string]> = [];
  for (const name of drivers) {
    for (const key of ['clean', 'smudge', 'process']) pairs.push([`filter.${name}.${key}`, '']);
    pairs.push([`filter.${name}.required`, 'false']);
  }
  const env: Record<string, string> = {};
  if (pairs.length === 0) return { overrides: env, worktree };
  env['GIT_CONFIG_COUNT'] = String(pairs.length);
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { overrides: env, worktree };
}

/**
 * Runs `git ARGS` in `options.cwd` with every config-named command switched off (see the module
 * comment). `diff`, `log` and `show` also get `--no-ext-diff --no-textconv` from the caller's
 * args being checked here.
 *
 * @returns exit code, stdout and stderr (UTF-8 text).
 * @throws BatonError `git_failed` when git cannot be started, times out, or exits non-zero
 *   (unless `allowFailure`); the message carries git's first stderr line.
 */
export async function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const sub = args[0];
  if (
    (sub === 'diff' || sub === 'log' || sub === 'show') &&
    !(args.includes('--no-ext-diff') && args.includes('--no-textconv'))
  ) {
    throw new TypeError(`runGit: git ${sub} needs --no-ext-diff and --no-textconv`);
  }
  const overrides = options.filterOverrides ?? (await readFilterOverrides(options));
  const result = await exec([...HARDENING, ...args], { ...options, env: { ...options.env, ...overrides } });
  if (result.exitCode !== 0 && !options.allowFailure) {
    const first = result.stderr.split('\n').find((l) => l.trim()) ?? `exit ${result.exitCode}`;
    throw new BatonError('git_failed', `git ${sub ?? ''} failed in ${options.cwd}: ${first.trim()}`, {
      details: { cwd: options.cwd, exitCode: result.exitCode },
    });
  }
  return result;
}
