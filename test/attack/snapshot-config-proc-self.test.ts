/**
 * Attack: a path that names a different file for each process that opens it. `.git/config` as a
 * symlink to `/proc/self/cwd/<name>`: baton's check without git (`pinConfigWithoutFilters`)
 * opens it in baton's own working directory (nothing there: "no config"), while git, started in
 * the repository's top, reads `<top>/<name>` — a file of the repository, naming a clean filter.
 * The agent of an earlier run can plant both; the next launch snapshot then ran the filter.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-proc-self-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8', env: { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1' } });
}

describe('launch snapshot with a config that resolves per process', () => {
  it('never runs a filter named by .git/config -> /proc/self/cwd/<file in the repository>', async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
    git(repo, 'add', '.gitattributes');
    git(repo, 'commit', '-qm', 'start');
    const marker = join(base, 'PWNED');
    const name = 'planted-config-7f3a';
    writeFileSync(join(repo, name), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "evil"]\n\tclean = "touch ${marker}; cat"\n`);
    rmSync(join(repo, '.git', 'config'));
    symlinkSync(`/proc/self/cwd/${name}`, join(repo, '.git', 'config'));
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    // baton's cwd holds no such file; git in the top reads the planted one
    expect(existsSync(join(process.cwd(), name))).toBe(false);
    expect(git(repo, 'config', '--get', 'filter.evil.clean').trim()).toBe(`touch ${marker}; cat`);
    const start = await snapshotTree(repo, join(base, 'start.index'));
    expect(start).toBeDefined();
    expect(existsSync(marker)).toBe(false);
  });
});
