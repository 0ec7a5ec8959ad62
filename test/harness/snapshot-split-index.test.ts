/**
 * Attack: since the start tree is written at the run's end from the private start index
 * (`snapshot.index`, issue #15), that index must still be readable then. In a repository with
 * `core.splitIndex = true` the private index seeded from the user's split index and written by
 * `git add -A` is itself a split index: it links to `.git/sharedindex.<sha>`. Git deletes shared
 * index files not named by the index it is writing once they are older than
 * `splitIndex.sharedIndexExpire` (`now` here, set by the repository or by the agent): any
 * `git add` by the agent during the run then removes the one the start index needs, and the
 * end's `git write-tree` fails (`index file open failed`), so the outcome carries no diff. Before
 * the change the start tree was written at launch and the same run had its diff.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { git, scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-attack-split-');

describe('the run diff in a repository with a split index', () => {
  it("still has the diff when the agent's git expires the shared index the start index links to", async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'core.splitIndex', 'true');
    git(repo, 'config', 'splitIndex.sharedIndexExpire', 'now');
    for (let i = 0; i < 20; i++) writeFileSync(join(repo, `f${i}.txt`), `${i}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'init');
    const runDir = join(base, 'run');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    expect(start).toBeDefined();
    // The agent's run: it edits every file and stages them (git writes a new shared index and
    // removes the expired ones).
    for (let i = 0; i < 20; i++) writeFileSync(join(repo, `f${i}.txt`), `changed ${i}\n`);
    git(repo, 'add', '-A');
    git(repo, 'update-index', '--split-index');
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'snapshot-end.index'),
      join(runDir, 'run.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.summary).toMatch(/20 files changed/);
  }, 30_000);
});
