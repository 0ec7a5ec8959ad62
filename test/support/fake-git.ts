/**
 * A stand-in `git` for tests of how baton runs git (src/harness/git.ts): a shell script in a
 * directory of its own, put first on the `PATH` handed to `runGit` (`GitOptions.path`).
 */
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
