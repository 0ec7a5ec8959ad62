/**
 * Attack: a relative `HOME` (e.g. `HOME=.` in a service unit). git resolves `$HOME/.gitconfig`
 * against its own working directory — the repository's top, where the launch snapshot runs it —
 * so a `.gitconfig` committed (or written by an agent) in the repository is git's global config.
 * `pinConfigWithoutFilters` read `HOME` against baton's own working directory instead, found
 * nothing there, and the launch snapshot's `add` ran the filter that file defines.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-relative-home-'));
const savedHome = process.env.HOME;
afterEach(() => {
  process.env.HOME = savedHome;
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8', env: { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1' } });
}

describe('launch snapshot with a relative HOME', () => {
  it('never runs a filter the repository defines in its own <HOME>/.gitconfig', async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
    git(repo, 'add', '.gitattributes');
    git(repo, 'commit', '-qm', 'start');
    const marker = join(base, 'PWNED');
    mkdirSync(join(repo, 'home'));
    writeFileSync(join(repo, 'home', '.gitconfig'), `[filter "evil"]\n\tclean = "touch ${marker}; cat"\n`);
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    // baton's own working directory is not the repository (it never is: runs name their cwd)
    expect(process.cwd()).not.toBe(repo);
    process.env.HOME = 'home';
    const start = await snapshotTree(repo, join(base, 'start.index'));
    expect(start).toBeDefined();
    expect(existsSync(marker)).toBe(false);
  });
});
