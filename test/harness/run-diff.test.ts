/**
 * The run diff (issue #13 item 2) with real git: a snapshot never touches the user's index or
 * files; outside a checkout there is no diff and no error; untracked files count, ignored ones do
 * not; changes already there at launch are not the run's; over `max_patch_kb` no patch is written
 * and the stat says why; the patch applies with `git apply` whatever the repository's diff config.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';

let dir: string;
const git = (cwd: string, args: string[]) =>
  execa('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: '1' },
  });

async function repo(name: string): Promise<string> {
  const path = join(dir, name);
  await mkdir(path, { recursive: true });
  await git(path, ['init', '-q']);
  await writeFile(join(path, 'a.txt'), 'one\ntwo\n');
  await writeFile(join(path, '.gitignore'), '*.log\n');
  await git(path, ['add', '-A']);
  await git(path, ['commit', '-qm', 'start']);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-run-diff-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('run diff', () => {
  it("runs the snapshot's git processes at the nice value asked for (the launch snapshot yields the CPU to the CLI)", async () => {
    const path = await repo('r-nice');
    const bin = join(dir, 'nice-bin');
    const log = join(dir, 'nice.log');
    await mkdir(bin);
    const realGit = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
    // A git that notes its own nice value (field 19 of /proc/self/stat) once it has been running a
    // while (the priority is set right after the spawn), then runs the real one.
    await writeFile(
      join(bin, 'git'),
      `#!/bin/sh\nsleep 0.3\nawk '{print $19}' /proc/$$/stat >> ${log}\nexec ${realGit} "$@"\n`,
      { mode: 0o755 },
    );
    const start = await snapshotTree(path, join(dir, 'r-nice.index'), { path: `${bin}:/usr/bin:/bin`, niceness: 10 });
    expect(start?.toplevel).toBe(path);
    const seen = (await readFile(log, 'utf8')).trim().split('\n').map(Number);
    expect(seen.length).toBeGreaterThanOrEqual(1); // add (and the filter listing, when the config names a filter)
    expect(seen.every((nice) => nice === Math.max(10, getPriority()))).toBe(true);
    // Without it, git runs at this process's own priority.
    await rm(log);
    await snapshotTree(path, join(dir, 'r-nice-2.index'), { path: `${bin}:/usr/bin:/bin` });
    expect(
      (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map(Number)
        .every((nice) => nice === getPriority()),
    ).toBe(true);
  });

  it('starts one git process for a launch snapshot when no config names a filter, two when one does (each start costs baton a fork, issue #15)', async () => {
    const bin = join(dir, 'count-bin');
    const log = join(dir, 'count.log');
    await mkdir(bin);
    const realGit = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
    await writeFile(join(bin, 'git'), `#!/bin/sh\necho "$*" >> ${log}\nexec ${realGit} "$@"\n`, { mode: 0o755 });
    // The global config git reads here is this test's own (an empty home), not the machine's.
    const home = join(dir, 'count-home');
    await mkdir(home);
    const savedHome = process.env.HOME;
    process.env.HOME = home;
    try {
      const path = await repo('r-count');
      await mkdir(join(path, 'sub'));
      const start = await snapshotTree(join(path, 'sub'), join(dir, 'r-count.index'), { path: `${bin}:/usr/bin:/bin` });
      expect(start?.toplevel).toBe(path);
      const commands = (await readFile(log, 'utf8')).trim().split('\n');
      expect(commands, commands.join('\n')).toHaveLength(1);
      expect(commands[0]).toMatch(/ add -A$/);
      // What it staged is the working tree: the run's change shows against it.
      await writeFile(join(path, 'sub', 'made.txt'), 'by the run\n');
      const diff = await diffSinceSnapshot(
        start!,
        join(dir, 'r-count-end.index'),
        join(dir, 'r-count.patch'),
        1024 * 1024,
        silentLogger(),
      );
      expect(diff?.stat).toContain('sub/made.txt');
      expect(diff?.summary).toBe('1 file changed, 1 insertion(+)');

      // A filter driver in the repository's config: git is asked which drivers to blank first.
      const filtered = await repo('r-count-filter');
      await git(filtered, ['config', 'filter.lfs.clean', 'cat']);
      await rm(log);
      expect(
        (await snapshotTree(filtered, join(dir, 'r-count-filter.index'), { path: `${bin}:/usr/bin:/bin` }))?.toplevel,
      ).toBe(filtered);
      const asked = (await readFile(log, 'utf8')).trim().split('\n');
      expect(asked, asked.join('\n')).toHaveLength(2);
      expect(asked[0]).toContain('config --includes -z --get-regexp');
      expect(asked[1]).toMatch(/ add -A$/);
    } finally {
      process.env.HOME = savedHome;
    }
  });

  it('is undefined, leaving no index, for a .git that looks like a repository but that git refuses', async () => {
    const path = await repo('r-refused');
    await writeFile(join(path, '.git', 'HEAD'), 'not a ref\n');
    const index = join(dir, 'r-refused.index');
    expect(await snapshotTree(path, index)).toBeUndefined();
    expect(existsSync(index)).toBe(false);
  });

  it('is undefined outside a git checkout, without an error', async () => {
    const plain = join(dir, 'plain');
    await mkdir(plain);
    expect(await snapshotTree(plain, join(dir, 'plain.index'))).toBeUndefined();
  });

  it('counts untracked files, not ignored ones, nor what was there at launch, and leaves the user index alone', async () => {
    const path = await repo('r1');
    await writeFile(join(path, 'a.txt'), 'one\ntwo\nowner edit\n'); // before the run
    await git(path, ['add', 'a.txt']); // staged by the owner
    const indexBefore = await readFile(join(path, '.git', 'index'));
    const start = await snapshotTree(path, join(dir, 'r1-start.index'));
    expect(start).toBeDefined();
    // The run:
    await writeFile(join(path, 'new.txt'), 'made by the run\n');
    await writeFile(join(path, 'debug.log'), 'ignored\n');
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'r1-end.index'),
      join(dir, 'r1.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.stat).toMatch(/new\.txt \| 1 \+\n 1 file changed, 1 insertion\(\+\)$/);
    const patch = await readFile(join(dir, 'r1.patch'), 'utf8');
    expect(patch).toContain('+made by the run');
    expect(patch).not.toContain('owner edit');
    expect(patch).not.toContain('debug.log');
    expect(await readFile(join(path, '.git', 'index'))).toEqual(indexBefore);
    expect((await git(path, ['status', '--porcelain'])).stdout.split('\n').sort()).toEqual(['?? new.txt', 'M  a.txt']);
  });

  it('is undefined when the run changed nothing', async () => {
    const path = await repo('r2');
    const start = await snapshotTree(path, join(dir, 'r2-start.index'));
    expect(
      await diffSinceSnapshot(start!, join(dir, 'r2-end.index'), join(dir, 'r2.patch'), 1024, silentLogger()),
    ).toBeUndefined();
  });

  it('writes no patch over the cap and says why; the stat stays', async () => {
    const path = await repo('r3');
    const start = await snapshotTree(path, join(dir, 'r3-start.index'));
    await writeFile(join(path, 'big.txt'), 'x'.repeat(5000) + '\n');
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'r3-end.index'),
      join(dir, 'r3.patch'),
      1024,
      silentLogger(),
    );
    expect(diff?.patchPath).toBeUndefined();
    expect(diff?.patchMissing).toMatch(/over \[harness\] max_patch_kb \(1\.0 KiB\)/);
    expect(diff?.stat).toContain('big.txt');
    expect(existsSync(join(dir, 'r3.patch'))).toBe(false);
  });

  it('makes a patch git apply takes even when the repository sets noprefix, relative diffs and colour', async () => {
    const path = await repo('r4');
    await mkdir(join(path, 'sub'));
    for (const [key, value] of [
      ['diff.noprefix', 'true'],
      ['diff.relative', 'true'],
      ['color.diff', 'always'],
      ['diff.mnemonicPrefix', 'true'],
    ]) {
      await git(path, ['config', key!, value!]);
    }
    const start = await snapshotTree(join(path, 'sub'), join(dir, 'r4-start.index'));
    await writeFile(join(path, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(join(path, 'sub', 'b.bin'), Buffer.from([0, 1, 2, 3, 255]));
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'r4-end.index'),
      join(dir, 'r4.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.patchPath).toBe(join(dir, 'r4.patch'));
    const clone = join(dir, 'r4-clone');
    await execa('git', ['clone', '-q', path, clone]);
    await git(clone, ['apply', '--check', join(dir, 'r4.patch')]);
    await git(clone, ['apply', join(dir, 'r4.patch')]);
    expect(await readFile(join(clone, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await readFile(join(clone, 'sub', 'b.bin'))).toEqual(Buffer.from([0, 1, 2, 3, 255]));
  });
});
