/**
 * Scratch repositories for the snapshot tests: a temporary directory removed after the test file,
 * and `git` with a fixed identity (so commits work on a machine with no git config).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A new directory under the system temp dir named `<prefix>…`, removed after the file's tests. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs `git args…` in `cwd` with a fixed author; returns its stdout.
 *
 * @throws the child's error when git exits non-zero.
 */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=a@b.c', '-c', 'user.name=a', ...args], { cwd, encoding: 'utf8' });
}
