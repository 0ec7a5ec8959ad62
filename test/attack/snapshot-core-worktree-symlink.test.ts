/**
 * Attack on the fast path's core.worktree check (a submodule's own core.worktree keeps the fast
 * path): the value is compared, resolved lexically against the git directory, with the top
 * found, but git resolves it physically (realpath: `..` after a symlink climbs from the link's
 * target). `core.worktree = link/../../../repo` with `.git/link` a symlink three levels down elsewhere
 * reads as the top lexically, while git's working tree is `<elsewhere>/repo`: the run's diff was
 * that directory's change.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { createLogger } from '../../src/core/logger.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-core-worktree-link-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('snapshot of a repository whose core.worktree climbs through a symlink', () => {
  it('never makes the run diff of a directory outside the repository', async () => {
    const repo = join(base, 'repo');
    const elsewhere = join(base, 'evil', 'repo');
    mkdirSync(repo);
    mkdirSync(join(base, 'evil', 'a', 'b', 'c'), { recursive: true });
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'secret.txt'), 'secret one\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    symlinkSync(join(base, 'evil', 'a', 'b', 'c'), join(repo, '.git', 'link'));
    execFileSync('git', ['config', 'core.worktree', 'link/../../../repo'], { cwd: repo });
    // git's own answer: the directory elsewhere
    expect(execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim()).toBe(elsewhere);

    const start = await snapshotTree(repo, join(base, 'start.index')).catch(() => undefined);
    writeFileSync(join(elsewhere, 'secret.txt'), 'secret two\n');
    writeFileSync(join(repo, 'a.txt'), 'changed by the run\n');
    if (!start) return; // no snapshot, no diff: nothing leaks
    const patchPath = join(base, 'run.patch');
    const diff = await diffSinceSnapshot(start, join(base, 'end.index'), patchPath, 1_000_000, createLogger({ level: 'silent' })).catch(() => undefined);
    expect(diff?.stat ?? '').not.toContain('secret.txt');
    let patch = '';
    try {
      patch = readFileSync(patchPath, 'utf8');
    } catch {
      // no patch file
    }
    expect(patch).not.toContain('secret');
  }, 20_000);
});
