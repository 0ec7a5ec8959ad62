/**
 * Attack: the launch snapshot's fast path runs `git add -A` in the top baton's discovery found
 * and takes that top for git's. A repository whose `.git/config` sets `core.worktree` moves git's
 * working tree elsewhere — any directory baton can read. The snapshot then staged that directory,
 * and the run's diff (stat, patch file, chat) was the change there, not the run's: another
 * directory's content leaked into the run's outcome and the agent's own change was missing. The
 * long way (rev-parse) finds no repository from git's top and fails: no diff.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { createLogger } from '../../src/core/logger.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-core-worktree-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('snapshot of a repository whose config sets core.worktree', () => {
  it('never makes the run diff of a directory outside the repository', async () => {
    const repo = join(base, 'repo');
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(repo);
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'secret.txt'), 'secret one\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    execFileSync('git', ['config', 'core.worktree', elsewhere], { cwd: repo });

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
