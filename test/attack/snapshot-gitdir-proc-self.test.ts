/**
 * Attack: `.git` as a symlink to `/proc/self/cwd/<relative path>`. The discovery without git and
 * `pinConfigWithoutFilters` resolve it in baton's working directory; git, pinned to the same
 * `<top>/.git` by GIT_DIR and started in the top, resolves it from the top. The `..`s of the
 * relative path land in two places the repository chooses: a git directory with a quiet config
 * for baton's check, and one naming a clean filter for git. (A service started in `/`, the
 * systemd default, makes the second place any path the repository knows.) The filter ran.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-gitdir-proc-self-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8', env: { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1' } });
}

describe('launch snapshot with a .git that resolves per process', () => {
  it('never runs a filter of the git directory git alone sees through .git -> /proc/self/cwd/…', async () => {
    const depth = process.cwd().split('/').filter(Boolean).length;
    // The top is `depth` levels under base: from it, `depth` times `..` is base; from baton's
    // cwd it is `/`.
    const top = join(base, ...Array.from({ length: depth }, (_, i) => `d${i}`));
    mkdirSync(top, { recursive: true });
    git(top, 'init', '-q', '-b', 'main');
    writeFileSync(join(top, '.gitattributes'), '*.txt filter=evil\n');
    git(top, 'add', '.gitattributes');
    git(top, 'commit', '-qm', 'start');
    const rel = `${'../'.repeat(depth)}${base.slice(1)}/gd`;
    const quiet = join(base, 'gd'); // what baton's process sees
    const evil = join(base, base.slice(1), 'gd'); // what git sees
    mkdirSync(join(base, base.slice(1)), { recursive: true });
    cpSync(join(top, '.git'), quiet, { recursive: true });
    cpSync(join(top, '.git'), evil, { recursive: true });
    const marker = join(base, 'PWNED');
    writeFileSync(join(evil, 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "evil"]\n\tclean = "touch ${marker}; cat"\n`);
    rmSync(join(top, '.git'), { recursive: true });
    symlinkSync(`/proc/self/cwd/${rel}`, join(top, '.git'));
    writeFileSync(join(top, 'a.txt'), 'changed\n');
    // git, run in the top, reads the evil config
    expect(git(top, 'config', '--get', 'filter.evil.clean').trim()).toBe(`touch ${marker}; cat`);
    rmSync(marker, { force: true });
    await snapshotTree(top, join(base, 'start.index')).catch(() => undefined);
    expect(existsSync(marker)).toBe(false);
  });
});
