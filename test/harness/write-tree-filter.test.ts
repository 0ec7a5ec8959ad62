/**
 * Attack: `git write-tree` moved to the run's end (issue #15) and runs with
 * `filterOverrides: {}` on the belief that it "converts no content". It does: writing the index
 * back, git re-checks every racily clean entry (a file whose mtime is not older than the index's)
 * by hashing the working-tree file, through the repository's clean filter (git 2.39
 * `read-cache.c` `ce_smudge_racily_clean_entry` → `ce_compare_data`). The agent edits files up to
 * the end of the run and may write `.git/config` (the threat git.ts hardens against): a clean
 * filter it names then runs in baton, outside the agent's sandbox, at the run's end. Before the
 * change write-tree ran with the blanked filter drivers.
 */
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { git, scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-attack-wtf-');

describe('the run-end write-tree in a repository whose config names a clean filter', () => {
  it('runs no filter command', async () => {
    const repo = join(base, 'repo');
    const marker = join(base, 'filter-ran');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'init');
    const runDir = join(base, 'run');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    expect(start).toBeDefined();
    // The agent, during the run: a clean filter in .git/config, and a last edit whose mtime is
    // not older than the end index (racily clean; a future mtime makes it so whatever the clock).
    git(repo, 'config', 'filter.evil.clean', `sh -c 'echo ran >> ${marker}; cat'`);
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(repo, 'a.txt'), future, future);
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'snapshot-end.index'),
      join(runDir, 'run.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.summary).toMatch(/1 file changed/);
    expect(existsSync(marker)).toBe(false);
  }, 30_000);
});
