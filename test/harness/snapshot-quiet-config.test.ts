/**
 * Attack: the launch snapshot skips git's own listing of filter drivers when a check without git
 * finds none to blank (src/harness/git-config-pin.ts `pinConfigWithoutFilters`). Each case here
 * hides a clean filter where a careless check would miss it: in the global config, behind an
 * include, in capitals or the old `[filter.name]` form, in the common config of a linked
 * worktree, in an outer repository git falls back to when it refuses the `.git` the discovery
 * found, behind a relative `HOME`, or behind a symlink through `/proc/self/cwd` (`.git`,
 * `.git/config`, `~/.gitconfig`), which names baton's working directory for baton and the
 * repository's top for git. The filter, when run, leaves a marker file; baton must never run it.
 * Each case fails with a check that answers "nothing to blank" without reading, with `add` left
 * to git's own discovery instead of pinned to what was checked, or (the last four) with the first
 * version of the check.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';
import { pinConfigWithoutFilters } from '../../src/harness/git.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-quiet-config-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let savedHome: string | undefined;
let home: string;
let n = 0;
beforeEach(() => {
  savedHome = process.env.HOME;
  home = join(base, `home-${++n}`);
  mkdirSync(home);
  process.env.HOME = home;
});
afterEach(() => {
  process.env.HOME = savedHome;
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** A committed repository whose `a.txt` goes through the `evil` filter; returns it and the marker. */
function repoWithAttributes(name: string): { path: string; marker: string } {
  const path = join(base, name);
  mkdirSync(path);
  git(path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, '.gitattributes'), '*.txt filter=evil\n');
  git(path, 'add', '.gitattributes');
  git(path, 'commit', '-qm', 'start');
  writeFileSync(join(path, 'a.txt'), 'changed\n');
  return { path, marker: join(base, `${name}-PWNED`) };
}

const evil = (marker: string): string => `touch ${marker}; cat`;

async function snapshotRunsNoFilter(cwd: string, marker: string): Promise<void> {
  const start = await snapshotTree(cwd, join(base, `${n}.index`));
  expect(start).toBeDefined();
  expect(existsSync(marker)).toBe(false);
}

describe("launch snapshot without git's own filter listing", () => {
  it('blanks a filter the global config defines', async () => {
    const { path, marker } = repoWithAttributes('global');
    writeFileSync(join(home, '.gitconfig'), `[filter "evil"]\n\tclean = "${evil(marker)}"\n`);
    await snapshotRunsNoFilter(path, marker);
  });

  it('runs no filter from a global config linked through /proc/self/cwd (a file in the repository for git)', async () => {
    const { path, marker } = repoWithAttributes('proc-global');
    // For git, which runs in the top, the link names the repository's own file; for baton, a file
    // beside baton's working directory that does not exist. git must read what baton read.
    writeFileSync(join(path, '.trap.cfg'), `[filter "evil"]\n\tclean = "${evil(marker)}"\n`);
    execFileSync('ln', ['-s', '/proc/self/cwd/.trap.cfg', join(home, '.gitconfig')]);
    await snapshotRunsNoFilter(path, marker);
  });

  it('blanks a filter in a file the repository config includes', async () => {
    const { path, marker } = repoWithAttributes('include');
    writeFileSync(join(path, '.git', 'extra.cfg'), `[filter "evil"]\n\tclean = "${evil(marker)}"\n`);
    git(path, 'config', 'include.path', 'extra.cfg');
    await snapshotRunsNoFilter(path, marker);
  });

  it('blanks a filter written in capitals or in the old [filter.name] form', async () => {
    for (const [name, header] of [
      ['caps', '[FiLtEr "evil"]'],
      ['dotted', '[filter.evil]'],
    ] as const) {
      const { path, marker } = repoWithAttributes(name);
      writeFileSync(
        join(path, '.git', 'config'),
        `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${header}\n\tclean = "${evil(marker)}"\n`,
      );
      // git reads it as a filter (so the case can fail)
      expect(git(path, 'config', '--get', 'filter.evil.clean').trim()).toBe(evil(marker));
      await snapshotRunsNoFilter(path, marker);
    }
  });

  it('blanks a filter of the common config when the run is in a linked worktree', async () => {
    const { path, marker } = repoWithAttributes('linked');
    git(path, 'config', 'filter.evil.clean', evil(marker));
    const linked = join(base, 'linked-wt');
    git(path, 'worktree', 'add', '-q', linked);
    rmSync(marker, { force: true }); // `worktree add` checked out through the filter (plain git did that)
    writeFileSync(join(linked, 'a.txt'), 'changed\n');
    await snapshotRunsNoFilter(linked, marker);
  });

  it("blanks the outer repository's filter when git refuses the .git the discovery found", async () => {
    const { path: outer, marker } = repoWithAttributes('outer');
    git(outer, 'config', 'filter.evil.clean', evil(marker));
    // A `.git` the discovery takes (HEAD a file, objects/ and refs/ directories) with a config
    // free of filters, and a HEAD git refuses: git's own discovery walks on to `outer`.
    const inner = join(outer, 'inner');
    mkdirSync(join(inner, '.git', 'objects'), { recursive: true });
    mkdirSync(join(inner, '.git', 'refs'));
    writeFileSync(join(inner, '.git', 'HEAD'), 'not a ref\n');
    writeFileSync(join(inner, '.git', 'config'), '[core]\n\tbare = false\n');
    writeFileSync(join(inner, 'b.txt'), 'inner\n');
    expect(git(inner, 'rev-parse', '--show-toplevel').trim()).toBe(outer);
    await snapshotTree(inner, join(base, 'outer.index')).catch(() => undefined);
    expect(existsSync(marker)).toBe(false);
  });

  it('runs no filter behind a relative HOME (git reads it from the top, in the repository)', async () => {
    const { path, marker } = repoWithAttributes('relative-home');
    mkdirSync(join(path, 'home'));
    writeFileSync(join(path, 'home', '.gitconfig'), `[filter "evil"]\n\tclean = "${evil(marker)}"\n`);
    // baton's own working directory is not the repository (it never is: runs name their cwd)
    expect(process.cwd()).not.toBe(path);
    process.env.HOME = 'home';
    await snapshotRunsNoFilter(path, marker);
  });

  it('runs no filter of a .git/config linked through /proc/self/cwd to a file in the repository', async () => {
    const { path, marker } = repoWithAttributes('proc-config');
    const name = 'planted-config-7f3a';
    writeFileSync(
      join(path, name),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "evil"]\n\tclean = "${evil(marker)}"\n`,
    );
    rmSync(join(path, '.git', 'config'));
    symlinkSync(`/proc/self/cwd/${name}`, join(path, '.git', 'config'));
    // baton's cwd holds no such file; git in the top reads the planted one
    expect(existsSync(join(process.cwd(), name))).toBe(false);
    expect(git(path, 'config', '--get', 'filter.evil.clean').trim()).toBe(evil(marker));
    await snapshotRunsNoFilter(path, marker);
  });

  it('runs no filter of the git directory git alone sees through .git -> /proc/self/cwd/<../…>', async () => {
    const depth = process.cwd().split('/').filter(Boolean).length;
    // The top is `depth` levels under base: from it, `depth` times `..` is base; from baton's cwd
    // it is `/`. (A service started in `/`, the systemd default, makes the second place any path
    // the repository knows.)
    const top = join(base, 'deep', ...Array.from({ length: depth - 1 }, (_, i) => `d${i}`));
    mkdirSync(top, { recursive: true });
    git(top, 'init', '-q', '-b', 'main');
    writeFileSync(join(top, '.gitattributes'), '*.txt filter=evil\n');
    git(top, 'add', '.gitattributes');
    git(top, 'commit', '-qm', 'start');
    const rel = `${'../'.repeat(depth)}${base.slice(1)}/gd`;
    const quiet = join(base, 'gd'); // what baton's process sees
    const hostile = join(base, base.slice(1), 'gd'); // what git sees
    mkdirSync(join(base, base.slice(1)), { recursive: true });
    cpSync(join(top, '.git'), quiet, { recursive: true });
    cpSync(join(top, '.git'), hostile, { recursive: true });
    const marker = join(base, 'gitdir-PWNED');
    writeFileSync(
      join(hostile, 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "evil"]\n\tclean = "${evil(marker)}"\n`,
    );
    rmSync(join(top, '.git'), { recursive: true });
    symlinkSync(`/proc/self/cwd/${rel}`, join(top, '.git'));
    writeFileSync(join(top, 'a.txt'), 'changed\n');
    // git, run in the top, reads the hostile config
    expect(git(top, 'config', '--get', 'filter.evil.clean').trim()).toBe(evil(marker));
    await snapshotTree(top, join(base, 'gitdir.index')).catch(() => undefined);
    expect(existsSync(marker)).toBe(false);
  });

  it('answers "ask git" at once for a config that is a FIFO, not a file', async () => {
    const { path } = repoWithAttributes('fifo');
    const gitDir = join(path, '.git');
    expect(await pinConfigWithoutFilters(gitDir)).toBeDefined();
    rmSync(join(gitDir, 'config'));
    execFileSync('mkfifo', [join(gitDir, 'config')]);
    expect(await pinConfigWithoutFilters(gitDir)).toBeUndefined();
  });
});
