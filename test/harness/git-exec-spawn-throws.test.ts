/**
 * Attack: node:child_process `spawn` reports some failures by throwing, not by an 'error' event:
 * a cwd that is a file (ENOTDIR), an argument list over the kernel's limit (E2BIG). `runGit`
 * promises `git_failed` for a git that cannot be started (src/harness/git-exec.ts `execGit`); callers
 * (the dispatcher) rethrow any error that is no BatonError as an internal fault.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/core/errors.js';
import { runGit } from '../../src/harness/git.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-attack-git-spawn-throws-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (e: unknown) => (isBatonError(e) ? e.code : `not a BatonError: ${String(e)}`),
  );
}

describe('runGit when spawn itself throws', () => {
  it('a cwd that is a regular file is git_failed', async () => {
    const file = join(dir, 'file');
    writeFileSync(file, 'x');
    expect(await codeOf(runGit(['status'], { cwd: file, filterOverrides: {} }))).toBe('git_failed');
  });

  it('an argument list over the kernel limit is git_failed', async () => {
    expect(await codeOf(runGit(['check-ignore', 'x'.repeat(4 * 1024 * 1024)], { cwd: dir, filterOverrides: {} }))).toBe(
      'git_failed',
    );
  });
});
