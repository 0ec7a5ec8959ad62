/**
 * `runGit` runs none of the commands a repository's own config can name (src/harness/git.ts).
 * A real git repository whose `.git/config` (and a file it includes) defines an fsmonitor, a
 * filter driver, an external diff, a textconv driver and a hooks path: plain git runs each of
 * them (checked first, so the test can fail), `runGit` runs none.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/core/errors.js';
import { runGit } from '../../src/harness/git.js';

let base: string;
let repo: string;
let marks: string;

function plainGit(args: string[], cwd: string, env: Record<string, string> = {}): void {
  execFileSync('git', args, { cwd, env: { ...process.env, ...env }, stdio: 'ignore' });
}

function hostileRepo(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir);
  plainGit(['init', '-q', '-b', 'main'], dir);
  plainGit(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'start'], dir);
  const hooks = join(dir, 'evil-hooks');
  mkdirSync(hooks);
  const script = (mark: string, tail: string): string => {
    const path = join(hooks, `${mark}.sh`);
    writeFileSync(path, `#!/bin/sh\ntouch ${join(marks, `${name}-${mark}`)}\n${tail}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  writeFileSync(join(hooks, 'post-checkout'), `#!/bin/sh\ntouch ${join(marks, `${name}-hook`)}\n`);
  chmodSync(join(hooks, 'post-checkout'), 0o755);
  const included = join(dir, '.git', 'extra.cfg');
  writeFileSync(
    included,
    `[filter "inc"]\n\tclean = ${script('inc-clean', 'cat')}\n\tsmudge = ${script('inc-smudge', 'cat')}\n`,
  );
  const config = [
    '[core]',
    `\tfsmonitor = ${script('fsmonitor', 'exit 1')}`,
    `\thooksPath = ${hooks}`,
    '[filter "evil"]',
    `\tclean = ${script('clean', 'cat')}`,
    `\tsmudge = ${script('smudge', 'cat')}`,
    '[diff]',
    `\texternal = ${script('external', 'exit 0')}`,
    '[diff "tc"]',
    `\ttextconv = ${script('textconv', 'cat "$1"')}`,
    '[include]',
    `\tpath = ${included}`,
  ].join('\n');
  writeFileSync(join(dir, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${config}\n`);
  writeFileSync(join(dir, '.gitattributes'), '*.txt filter=evil diff=tc\n*.inc filter=inc\n');
  writeFileSync(join(dir, 'a.txt'), 'one\n');
  writeFileSync(join(dir, 'b.inc'), 'two\n');
  return dir;
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'baton-git-'));
  marks = join(base, 'marks');
  mkdirSync(marks);
  repo = hostileRepo('repo');
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('runGit in a repository with a hostile config', () => {
  it('plain git runs the config-named commands (the hazard is real here)', () => {
    const probe = hostileRepo('probe');
    plainGit(['add', '-A'], probe);
    plainGit(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'x'], probe);
    writeFileSync(join(probe, 'a.txt'), 'changed\n');
    plainGit(['diff'], probe);
    plainGit(['worktree', 'add', '-q', join(base, 'probe-wt')], probe);
    const seen = readdirSync(marks).filter((m) => m.startsWith('probe-'));
    expect(seen).toEqual(
      expect.arrayContaining(['probe-clean', 'probe-inc-clean', 'probe-external', 'probe-hook', 'probe-smudge']),
    );
  });

  it('runs none of them for add, write-tree, diff and worktree add', async () => {
    const index = join(base, 'snapshot.index');
    await runGit(['add', '-A'], { cwd: repo, env: { GIT_INDEX_FILE: index } });
    const tree = (await runGit(['write-tree'], { cwd: repo, env: { GIT_INDEX_FILE: index } })).stdout.trim();
    expect(tree).toMatch(/^[0-9a-f]{40}$/);
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    await runGit(['add', '-A'], { cwd: repo, env: { GIT_INDEX_FILE: index } });
    const after = (await runGit(['write-tree'], { cwd: repo, env: { GIT_INDEX_FILE: index } })).stdout.trim();
    const diff = await runGit(['diff', '--no-ext-diff', '--no-textconv', tree, after], { cwd: repo });
    expect(diff.stdout).toContain('+changed');
    await runGit(['worktree', 'add', '-q', '-b', 'baton/x', join(base, 'repo-wt')], { cwd: repo });
    expect(existsSync(join(base, 'repo-wt', '.git'))).toBe(true);
    expect(readdirSync(marks).filter((m) => m.startsWith('repo-'))).toEqual([]);
  });

  it('refuses a diff without --no-ext-diff and --no-textconv', async () => {
    await expect(runGit(['diff'], { cwd: repo })).rejects.toThrow(/--no-ext-diff/);
  });

  it("a failing git is a git_failed error with git's first stderr line", async () => {
    const err = await runGit(['rev-parse', 'no-such-ref'], { cwd: repo }).catch((e: unknown) => e);
    expect(isBatonError(err, 'git_failed')).toBe(true);
    expect((err as Error).message).toMatch(/no-such-ref|unknown revision|ambiguous/);
  });
});
