/**
 * The run diff when the launch tree was written during the run and the launch index seeds the
 * end one (src/harness/diff.ts `beginSnapshotTree`): the same guarantees as the diff taken the
 * long way — changes already there at launch (staged, unstaged, untracked) are not the run's,
 * untracked files the run makes count and ignored ones do not, a filter the repository names runs
 * no command, and the patch applies to the tree as it was at launch.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { beginSnapshotTree, diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { git, scratchDir } from '../support/git-repo.js';

const base = scratchDir('baton-diff-launch-tree-');

describe('the run diff from a launch tree written during the run', () => {
  it("keeps what was there at launch out, counts the run's untracked files, not ignored ones, and applies", async () => {
    const repo = join(base, 'repo');
    const marker = join(base, 'filter-ran');
    mkdirSync(join(repo, 'src'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitignore'), '*.log\n');
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
    writeFileSync(join(repo, 'src', 'dirty.txt'), 'one\n');
    writeFileSync(join(repo, 'src', 'staged.txt'), 'one\n');
    writeFileSync(join(repo, 'gone.txt'), 'bye\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'init');
    // A hostile config from before the run: the snapshot must blank this driver.
    git(repo, 'config', 'filter.evil.clean', `sh -c 'echo ran >> ${marker}; cat'`);
    // Before the run: an unstaged edit, a staged one, an untracked file.
    writeFileSync(join(repo, 'src', 'dirty.txt'), 'one\nowner edit\n');
    writeFileSync(join(repo, 'src', 'staged.txt'), 'one\nowner staged\n');
    git(repo, '-c', 'filter.evil.clean=', 'add', 'src/staged.txt');
    writeFileSync(join(repo, 'notes.txt'), 'owner notes\n');
    const userIndex = readFileSync(join(repo, '.git', 'index'));
    const atLaunch = join(base, 'at-launch');
    cpSync(repo, atLaunch, { recursive: true });

    const runDir = join(base, 'run');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    beginSnapshotTree(start!);
    expect(await start!.tree).toMatch(/^[0-9a-f]{40}$/);
    // The run: edits the dirty file further, adds an untracked and an ignored file, deletes one.
    writeFileSync(join(repo, 'src', 'dirty.txt'), 'one\nowner edit\nrun edit\n');
    writeFileSync(join(repo, 'src', 'new.txt'), 'made by the run\n');
    writeFileSync(join(repo, 'debug.log'), 'ignored\n');
    rmSync(join(repo, 'gone.txt'));
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'snapshot-end.index'),
      join(runDir, 'run.patch'),
      1024 * 1024,
      silentLogger(),
    );

    // The launch index was moved to seed the end one (the path under test), not copied anew.
    expect(existsSync(start!.indexPath)).toBe(false);
    expect(diff?.summary).toBe('3 files changed, 2 insertions(+), 1 deletion(-)');
    const patch = readFileSync(join(runDir, 'run.patch'), 'utf8');
    expect(patch).toContain('+run edit');
    expect(patch).toContain('+made by the run');
    expect(patch).toContain('-bye');
    for (const before of ['owner edit', 'owner staged', 'owner notes', 'debug.log']) {
      expect(patch).not.toContain(`+${before}`);
    }
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(repo, '.git', 'index'))).toEqual(userIndex);
    // The patch applies to the working tree as it was at launch and gives the run's result.
    git(atLaunch, 'apply', join(runDir, 'run.patch'));
    for (const file of ['src/dirty.txt', 'src/new.txt', 'src/staged.txt', 'notes.txt']) {
      expect(readFileSync(join(atLaunch, file), 'utf8')).toBe(readFileSync(join(repo, file), 'utf8'));
    }
    expect(existsSync(join(atLaunch, 'gone.txt'))).toBe(false);
  }, 30_000);

  it('is undefined when the run changed nothing', async () => {
    const repo = join(base, 'quiet');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    writeFileSync(join(repo, 'untracked.txt'), 'there before\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'init');
    const runDir = join(base, 'run-quiet');
    mkdirSync(runDir);
    const start = await snapshotTree(repo, join(runDir, 'snapshot.index'));
    beginSnapshotTree(start!);
    await start!.tree;
    expect(
      await diffSinceSnapshot(
        start!,
        join(runDir, 'snapshot-end.index'),
        join(runDir, 'run.patch'),
        1024,
        silentLogger(),
      ),
    ).toBeUndefined();
  }, 30_000);
});
