/**
 * A stand-in `git` for tests of how baton runs git (src/harness/git.ts): a shell script in a
 * directory of its own, put first on the `PATH` handed to `runGit` (`GitOptions.path`).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes `<dir>/<name>/git` running `body` (sh) and returns the PATH to use (that directory,
 * then /usr/bin:/bin).
 */
export function fakeGit(dir: string, name: string, body: string): string {
  const bin = join(dir, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'git'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(bin, 'git'), 0o755);
  return `${bin}:/usr/bin:/bin`;
}

/** Whether a process with this pid exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A {@link holdingGit} on this process's `PATH`. */
export interface HoldingGit {
  /** Where each call is noted: `git <args>` when it starts, `done <args>` when it ended. */
  log: string;
  /** While this file exists, an `add -A` waits before it runs (a repository whose git takes long). */
  hold: string;
  /** The `PATH` before, without this git (for setting up repositories unseen). */
  realPath: string;
  /** Puts `PATH` back. */
  restore(): void;
}

/**
 * Puts a `git` that notes its calls and can be held first on this process's `PATH`, where the
 * supervisor's snapshots find git (they are given no `path`), in `<dir>/holding-bin`.
 */
export function holdingGit(dir: string): HoldingGit {
  const bin = join(dir, 'holding-bin');
  mkdirSync(bin, { recursive: true });
  const log = join(dir, 'git-calls.log');
  const hold = join(dir, 'git-hold');
  const realPath = process.env.PATH ?? '/usr/bin:/bin';
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8', env: { PATH: realPath } }).trim();
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh\necho "git $*" >> ${log}\ncase "$*" in *" add -A"*) while [ -e ${hold} ]; do sleep 0.02; done;; esac\n${realGit} "$@"\nrc=$?\necho "done $*" >> ${log}\nexit $rc\n`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  process.env.PATH = `${bin}:${realPath}`;
  return { log, hold, realPath, restore: () => void (process.env.PATH = realPath) };
}
