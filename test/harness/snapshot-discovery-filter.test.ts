/**
 * Attack: the launch snapshot's fast path reads the filter drivers to blank in the run's cwd but
 * runs `git add -A` in the top baton's own discovery found. The two disagree when a directory
 * between them holds a `.git` directory git accepts and the discovery does not — git only asks
 * that `objects` be searchable (access X_OK), and an executable regular file is. Git
 * in cwd then finds that inner repository (no filters), the discovery walks on to the outer one,
 * and `add` in the outer top runs the outer config's clean filter: a command from an untrusted
 * repository, run by baton.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../src/harness/diff.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-discovery-filter-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('launch snapshot from inside a repository git finds and the discovery skips', () => {
  it('runs no filter driver of the outer repository', async () => {
    const outer = join(base, 'outer');
    const marker = join(base, 'PWNED');
    mkdirSync(outer);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: outer });
    execFileSync('git', ['config', 'filter.evil.clean', `touch ${marker}; cat`], { cwd: outer });
    writeFileSync(join(outer, '.gitattributes'), 'a.txt filter=evil\n');
    writeFileSync(join(outer, 'a.txt'), 'hi\n');
    // git's is_git_directory asks access(objects, X_OK): an executable regular file passes it;
    // the discovery asks for a directory.
    const innerGit = join(outer, 'inner', '.git');
    mkdirSync(join(innerGit, 'refs'), { recursive: true });
    writeFileSync(join(innerGit, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(innerGit, 'objects'), '', { mode: 0o755 });
    // git itself takes inner for a repository (so its config, not the outer one, is read in cwd)
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd: join(outer, 'inner'),
      encoding: 'utf8',
    }).trim();
    expect(top).toBe(join(outer, 'inner'));

    await snapshotTree(join(outer, 'inner'), join(base, 'private.index')).catch(() => undefined);
    expect(existsSync(marker)).toBe(false);
  }, 20_000);
});
