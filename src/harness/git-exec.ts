/**
 * Starting one git process and collecting what it writes, within a time and an output limit.
 * The hardening (what git may run) is the caller's: see `git.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { BatonError } from '../core/errors.js';
import { gitEnv } from './git-hardening.js';
import type { GitHost } from './git-host.js';

/** Options for {@link runGit}. */
export interface GitOptions {
  /** Directory git runs in (the repository or worktree). */
  cwd: string;
  /** `PATH` used to find `git`; only absolute entries are kept. Default: `host.PATH`. */
  path?: string;
  /**
   * The service's `PATH` and `HOME` git runs with (`path` wins over its `PATH`). Default: this
   * process's, read when the command starts.
   */
  host?: GitHost;
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

/** Default of {@link GitOptions.maxBufferBytes}: 64 MiB. */
const DEFAULT_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/** Builds the `git_failed` error of one git command; `fix` is what the operator can do. */
type GitFailure = (why: string, cause?: unknown, fix?: string) => BatonError;

/**
 * Starts git with node:child_process, not execa: on the 2-core machine execa's own work around a
 * spawn (its option handling, streams, and the exit handlers it adds and removes per call) cost
 * baton ~4-6 ms of CPU per git process beside the fork, at a ~120 MB heap (40 calls of
 * `git --version` each way). The launch snapshot's git runs while the CLI starts, on the same two
 * cores; a run's end starts several more.
 *
 * `args` go to git as they are (the caller puts {@link HARDENING} first).
 *
 * @throws BatonError `git_failed` when git cannot be started, is killed by a signal, runs past
 *   `timeoutMs`, or writes more than `maxBufferBytes` to stdout or stderr (it is killed then).
 */
export async function execGit(args: string[], options: GitOptions): Promise<GitResult> {
  const subcommand = args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? '';
  const fail = failureOf(subcommand, options.cwd);
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
  const settled = settle(child, options, fail);
  // The child holds its own copy of the descriptor. Closed only now: an await between the spawn
  // and the listeners of `settle` would miss a quick git's 'close', and the call would never settle.
  await stdin?.close();
  await lowerPriority(child, options.niceness, settled);
  return settled;
}

/** The {@link GitFailure} of `git <subcommand>` in `cwd`; `fix` by default for a git that could not start. */
function failureOf(subcommand: string, cwd: string): GitFailure {
  return (why, cause, fix = 'Check that git is installed and on PATH.') =>
    new BatonError('git_failed', `git ${subcommand} could not run: ${why}. ${fix}`, {
      ...(cause === undefined ? {} : { cause }),
      details: { cwd },
    });
}

/**
 * Listens to a started git until it ends: its output kept up to the limit, killed (with its
 * process group) past the time limit or the output limit.
 *
 * @returns what git wrote and its exit code; rejects with `git_failed` as {@link execGit}.
 */
function settle(child: ChildProcess, options: GitOptions, fail: GitFailure): Promise<GitResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise<GitResult>((resolve, reject) => {
    let failure: BatonError | undefined;
    const stop = (why: BatonError): void => {
      failure ??= why;
      killGit(child);
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
    const output = collectOutput(child, options, fail, stop);
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
        resolve(decoded(code, output, options.binaryStdout));
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
}

/** Kills git's process group (git alone when that fails) and stops reading its pipes. */
function killGit(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
  // A descendant outside the group (its own session) may still hold the pipes: stop reading
  // them, so 'close' follows git's own exit.
  child.stdout!.destroy();
  child.stderr!.destroy();
}

/** What git wrote so far: the chunks of stdout and stderr, in order. */
interface GitOutput {
  out: Buffer[];
  err: Buffer[];
}

/**
 * Keeps git's stdout and stderr as they come; `stop`s git when either passes
 * {@link GitOptions.maxBufferBytes}.
 */
function collectOutput(
  child: ChildProcess,
  options: GitOptions,
  fail: GitFailure,
  stop: (why: BatonError) => void,
): GitOutput {
  const limit = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
  const output: GitOutput = { out: [], err: [] };
  const bytes = { out: 0, err: 0 };
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
    else output.out.push(chunk);
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
    else output.err.push(chunk);
  });
  return output;
}

/**
 * The {@link GitResult} of a git that exited with `code`.
 *
 * @throws RangeError (or what Buffer throws) for an output longer than a string can be.
 */
function decoded(code: number, output: GitOutput, binaryStdout: boolean | undefined): GitResult {
  const stderr = Buffer.concat(output.err).toString('utf8');
  if (binaryStdout) return { exitCode: code, stdout: '', stdoutBytes: Buffer.concat(output.out), stderr };
  return { exitCode: code, stdout: Buffer.concat(output.out).toString('utf8'), stderr };
}

/**
 * Sets git's nice value to `niceness` (never above this process's own: raising a priority needs
 * privilege); nothing for 0 or none.
 *
 * @throws what `os.setPriority` throws but ESRCH, once git is stopped and `settled` is settled.
 */
async function lowerPriority(
  child: ChildProcess,
  niceness: number | undefined,
  settled: Promise<GitResult>,
): Promise<void> {
  if (!niceness || child.pid === undefined) return;
  try {
    // Never above this process's own nice value: raising a priority needs privilege.
    setPriority(child.pid, Math.max(niceness, getPriority()));
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
