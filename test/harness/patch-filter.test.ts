/**
 * Which added files stay out of a run's patch as ignored before the run, when the rules that
 * ignored them sat in `.gitignore` files of their directories (not only the top one), in a
 * directory whose name looks like a glob: only those files are looked up in the launch tree.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { git, scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-patch-filter-');

describe('files ignored before the run', () => {
  it("are left out by the rules of their own directories' .gitignore files, which the run removed", async () => {
    const repo = join(base, 'repo');
    mkdirSync(join(repo, 'a', 'b'), { recursive: true });
    mkdirSync(join(repo, 'x[1]'));
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitignore'), 'top-secret.txt\n');
    writeFileSync(join(repo, 'a', 'b', '.gitignore'), 'deep.txt\n');
    writeFileSync(join(repo, 'x[1]', '.gitignore'), 'globby.txt\n');
    writeFileSync(join(repo, 'a', 'b', 'kept.txt'), 'kept\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'init');
    const runDir = join(base, 'run');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    // The run un-ignores them and writes each, and one ordinary file.
    for (const file of ['.gitignore', 'a/b/.gitignore', 'x[1]/.gitignore']) rmSync(join(repo, file));
    writeFileSync(join(repo, 'top-secret.txt'), 'canary top\n');
    writeFileSync(join(repo, 'a', 'b', 'deep.txt'), 'canary deep\n');
    writeFileSync(join(repo, 'x[1]', 'globby.txt'), 'canary glob\n');
    writeFileSync(join(repo, 'a', 'plain.txt'), 'plain\n');
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'snapshot-end.index'),
      join(runDir, 'run.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.leftOut).toEqual([
      { path: 'a/b/deep.txt', why: 'ignored_before' },
      { path: 'top-secret.txt', why: 'ignored_before' },
      { path: 'x[1]/globby.txt', why: 'ignored_before' },
    ]);
    expect(diff?.patchPath).toBeDefined();
  }, 30_000);
});
