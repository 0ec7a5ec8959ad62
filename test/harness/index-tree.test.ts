/**
 * The launch tree written during the run, off the working tree (src/harness/index-tree.ts): it
 * runs no filter command even when the agent names one in `.git/config` while racily clean
 * entries are waiting to be re-checked, and the launch index stays one whose racily clean entries
 * git re-checks at the run's end (a same-size edit within the launch's second is still the run's).
 */
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { beginSnapshotTree, diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { writeIndexTree } from '../../src/harness/index-tree.js';
import { git, scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-index-tree-');

/** A committed repository `name` whose `*.txt` files name the clean filter `evil`. */
function repoWithFilterAttribute(name: string): string {
  const repo = join(base, name);
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'init');
  return repo;
}

describe('the launch tree written during the run', () => {
  it('runs no clean filter the agent names while every entry is racily clean, and is the launch tree', async () => {
    const repo = repoWithFilterAttribute('r-filter');
    const marker = join(base, 'filter-ran');
    const runDir = join(base, 'run-filter');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    expect(start?.gitDir).toBeDefined();
    // The agent, once it has its task: a clean filter in .git/config. Every entry is made racily
    // clean (the index no newer than any file), so writing the index back re-checks each file
    // whose stat still matches, a.txt among them, by hashing it through that filter.
    git(repo, 'config', 'filter.evil.clean', `sh -c 'echo ran >> ${marker}; cat'`);
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(start!.indexPath, past, past);
    beginSnapshotTree(start!);
    const tree = await start!.tree;
    expect(existsSync(marker)).toBe(false);
    expect(tree).toBe(git(repo, 'rev-parse', 'HEAD^{tree}').trim());
  }, 30_000);

  it("gives the index back its mtime, so a same-size edit in the launch's second is still seen at the end", async () => {
    const repo = join(base, 'r-racy');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    // Only mtime (seconds) and size tell git a file changed here: the racy check is what is left.
    git(repo, 'config', 'core.checkStat', 'minimal');
    git(repo, 'config', 'core.trustctime', 'false');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'init');
    const second = Math.floor(Date.now() / 1000) - 10;
    utimesSync(join(repo, 'a.txt'), second, second);
    const runDir = join(base, 'run-racy');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    // As if the owner saved a.txt in the second the launch index was written: it is racily clean.
    utimesSync(start!.indexPath, second, second);
    beginSnapshotTree(start!);
    expect(await start!.tree).toBe(git(repo, 'rev-parse', 'HEAD^{tree}').trim());
    expect(Math.floor(statSync(start!.indexPath).mtimeMs / 1000)).toBeLessThanOrEqual(second);
    // The agent's edit: same size, same mtime second.
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    utimesSync(join(repo, 'a.txt'), second, second);
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'snapshot-end.index'),
      join(runDir, 'run.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.stat).toMatch(/a\.txt \| 2 \+-/);
  }, 30_000);

  it('fails with git_failed for an index naming a blob the repository lacks', async () => {
    const repo = repoWithFilterAttribute('r-missing');
    const runDir = join(base, 'run-missing');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    const other = join(base, 'r-other');
    mkdirSync(other);
    git(other, 'init', '-q');
    await expect(writeIndexTree(start!.indexPath, join(other, '.git'), runDir)).rejects.toMatchObject({
      code: 'git_failed',
    });
  }, 30_000);
});
