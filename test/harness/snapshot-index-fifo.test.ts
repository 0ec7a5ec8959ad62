/**
 * Attack: the diff snapshot seeds its private index with `copyFile` of the repository's own
 * index (`rev-parse --git-path index`), outside runGit's timeout. A repository whose `.git/index`
 * is a FIFO (a hostile checkout, or the agent during the run: `mkfifo .git/index` after removing
 * it) makes copyFile block forever: the launch (start snapshot) or the run's end (end snapshot)
 * never finishes, so no outcome is sent and the worktree stays locked.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-fifo-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('snapshot of a repository whose index is a FIFO', () => {
  it('finishes (snapshot or error) instead of hanging', async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    execFileSync('git', ['add', '-A'], { cwd: repo });
    unlinkSync(join(repo, '.git', 'index'));
    execFileSync('mkfifo', [join(repo, '.git', 'index')]);
    const outcome = await Promise.race([
      snapshotTree(repo, join(base, 'private.index')).then(
        () => 'finished',
        () => 'failed',
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('hung'), 8_000).unref()),
    ]);
    expect(outcome).not.toBe('hung');
    // Unblock a pending open (if the copy hung), so the worker can exit: O_RDWR on a FIFO never blocks on Linux.
    closeSync(openSync(join(repo, '.git', 'index'), 'r+'));
  }, 15_000);
});
