/**
 * The worktree root a run's directory keys its lock on (the workspace gate): found as
 * `git rev-parse --show-toplevel` finds it, without running git on the launch path (issue #15).
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findWorktreeRoot } from '../../src/harness/workspace.js';

let dir: string;
const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd, stdin: 'ignore' });
/** What git itself says (the old way), `cwd` outside a checkout. */
const gitTop = async (cwd: string): Promise<string> => {
  const result = await execa('git', ['rev-parse', '--show-toplevel'], { cwd, reject: false, stdin: 'ignore' });
  return result.exitCode === 0 ? realpath(result.stdout.trim()) : cwd;
};

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'baton-wtroot-')));
  await mkdir(join(dir, 'plain', 'sub'), { recursive: true });
  await mkdir(join(dir, 'repo', 'src', 'deep'), { recursive: true });
  await git(dir, 'init', '-q', 'repo');
  await writeFile(join(dir, 'repo', 'a.txt'), 'a\n');
  await git(join(dir, 'repo'), 'add', 'a.txt');
  await git(join(dir, 'repo'), 'commit', '-qm', 'a');
  await git(join(dir, 'repo'), 'worktree', 'add', '-q', join(dir, 'linked'));
  await mkdir(join(dir, 'linked', 'inside'));
  await git(join(dir, 'repo'), 'init', '-q', 'nested');
  await git(dir, 'init', '-q', '--bare', 'bare.git');
  await mkdir(join(dir, 'badgitfile', 'sub'), { recursive: true });
  await writeFile(join(dir, 'badgitfile', '.git'), 'not a gitfile\n');
  await mkdir(join(dir, 'emptygitdir', '.git'), { recursive: true });
  await mkdir(join(dir, 'emptygitdir', 'sub'));
  await symlink(join(dir, 'repo'), join(dir, 'repo-link'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('findWorktreeRoot', () => {
  const cases = [
    'plain',
    'plain/sub',
    'repo',
    'repo/src/deep',
    'linked',
    'linked/inside',
    'repo/nested',
    'bare.git',
    'bare.git/refs',
    'badgitfile/sub',
    'emptygitdir/sub',
  ];
  it.each(cases)('%s: the same root as git rev-parse --show-toplevel', async (path) => {
    const cwd = await realpath(join(dir, path));
    expect(await findWorktreeRoot(cwd)).toBe(await gitTop(cwd));
  });

  it('finds it without running git (no git on PATH)', async () => {
    const saved = process.env.PATH;
    process.env.PATH = join(dir, 'no-bin-here');
    try {
      expect(await findWorktreeRoot(join(dir, 'repo', 'src', 'deep'))).toBe(join(dir, 'repo'));
      expect(await findWorktreeRoot(join(dir, 'linked', 'inside'))).toBe(join(dir, 'linked'));
    } finally {
      process.env.PATH = saved;
    }
  });
});
