/**
 * Attack: git output larger than a JavaScript string can hold (buffer.constants.MAX_STRING_LENGTH,
 * ~512 MiB) but under `maxBufferBytes`. The run's patch is read with a limit of 4 × max_patch_kb
 * (max_patch_kb goes up to 1 GiB), so a run that writes a large file makes `git diff --binary`
 * print such an output. Decoding it threw inside the child's 'close' listener: an uncaught
 * exception (baton's process dies) and a runGit promise that never settles. It must be a
 * `git_failed` like any other output baton cannot keep.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/core/errors.js';
import { runGit } from '../../src/harness/git.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-attack-git-huge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runGit with an output too large for a string', () => {
  it('fails with git_failed, without an uncaught exception', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const bytes = constants.MAX_STRING_LENGTH + 1024 * 1024;
    writeFileSync(join(bin, 'git'), `#!/bin/sh\nexec head -c ${bytes} /dev/zero\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    // vitest's own handler would report it too; this one makes the test say what happened
    process.prependListener('uncaughtException', onUncaught);
    try {
      const outcome = await Promise.race([
        runGit(['diff', '--no-ext-diff', '--no-textconv'], {
          cwd: dir,
          path: `${bin}:/usr/bin:/bin`,
          maxBufferBytes: 2 * bytes,
          filterOverrides: {},
        }).then(
          () => 'resolved',
          (e: unknown) => e,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 30_000)),
      ]);
      expect(uncaught.map(String)).toEqual([]);
      expect(isBatonError(outcome, 'git_failed') ? 'git_failed' : String(outcome)).toBe('git_failed');
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
