/**
 * The project's CLAUDE.md files, read by baton for claude: only regular UTF-8 files inside the
 * checkout, bounded, each left-out one named with why. Real files, FIFOs and links on disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectProjectInstructions, MAX_PROJECT_INSTRUCTIONS_BYTES } from '../../src/harness/project-instructions.js';

const NAMES = ['CLAUDE.md', '.claude/CLAUDE.md'];
let dir: string;
let repo: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'instructions-')));
  repo = join(dir, 'repo');
  await mkdir(join(repo, '.git'), { recursive: true });
  // What git looks for in a `.git` directory; an empty one is passed over.
  await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await mkdir(join(repo, '.claude'));
  await mkdir(join(repo, 'pkg', 'web'), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('collectProjectInstructions', () => {
  it('reads CLAUDE.md and .claude/CLAUDE.md from the checkout top down to the run directory, outermost first', async () => {
    await writeFile(join(repo, 'CLAUDE.md'), 'top rule\n');
    await writeFile(join(repo, '.claude', 'CLAUDE.md'), 'dot-claude rule\n');
    await writeFile(join(repo, 'pkg', 'CLAUDE.md'), 'pkg rule\n');
    await writeFile(join(dir, 'CLAUDE.md'), 'above the checkout: not the project’s\n');
    const found = await collectProjectInstructions(join(repo, 'pkg', 'web'), NAMES);
    expect(found.files).toEqual([
      join(repo, 'CLAUDE.md'),
      join(repo, '.claude', 'CLAUDE.md'),
      join(repo, 'pkg', 'CLAUDE.md'),
    ]);
    expect(found.text).toBe(
      `Contents of ${join(repo, 'CLAUDE.md')} (project instructions, checked into the repository):\n\ntop rule\n\n` +
        `Contents of ${join(repo, '.claude', 'CLAUDE.md')} (project instructions, checked into the repository):\n\ndot-claude rule\n\n` +
        `Contents of ${join(repo, 'pkg', 'CLAUDE.md')} (project instructions, checked into the repository):\n\npkg rule\n`,
    );
    expect(found.skipped).toEqual([]);
  });

  it('gives nothing, and says nothing, when there is no instruction file', async () => {
    expect(await collectProjectInstructions(repo, NAMES)).toEqual({ text: undefined, files: [], skipped: [] });
  });

  it('leaves out, by name and with why, a link out of the checkout, a FIFO, a directory, binary, and a file past the bound', async () => {
    const secret = join(dir, 'secret.txt');
    await writeFile(secret, 'ssh key\n');
    await symlink(secret, join(repo, 'CLAUDE.md'));
    execFileSync('mkfifo', [join(repo, '.claude', 'CLAUDE.md')]);
    await mkdir(join(repo, 'pkg', 'CLAUDE.md'));
    await mkdir(join(repo, 'pkg', 'web', '.claude'));
    await writeFile(join(repo, 'pkg', 'web', 'CLAUDE.md'), Buffer.from([0xff, 0xfe, 0x00, 0x41]));
    await writeFile(join(repo, 'pkg', 'web', '.claude', 'CLAUDE.md'), 'x'.repeat(MAX_PROJECT_INSTRUCTIONS_BYTES + 1));
    const found = await collectProjectInstructions(join(repo, 'pkg', 'web'), NAMES);
    expect(found.text).toBeUndefined();
    expect(found.skipped).toEqual([
      `${join(repo, 'CLAUDE.md')} was not given to the agent: it leads outside the checkout (to ${secret}).`,
      `${join(repo, '.claude', 'CLAUDE.md')} was not given to the agent: it is not a regular file.`,
      `${join(repo, 'pkg', 'CLAUDE.md')} was not given to the agent: it is not a regular file.`,
      `${join(repo, 'pkg', 'web', 'CLAUDE.md')} was not given to the agent: it is not UTF-8 text.`,
      `${join(repo, 'pkg', 'web', '.claude', 'CLAUDE.md')} was not given to the agent: it is ${MAX_PROJECT_INSTRUCTIONS_BYTES + 1} bytes, more than the ${MAX_PROJECT_INSTRUCTIONS_BYTES} bytes of instructions left (at most ${MAX_PROJECT_INSTRUCTIONS_BYTES} in all); shorten it.`,
    ]);
  });

  it('follows a link that stays inside the checkout, and bounds all files together', async () => {
    await writeFile(join(repo, 'AGENTS.md'), 'shared rule\n');
    await symlink('AGENTS.md', join(repo, 'CLAUDE.md'));
    await writeFile(join(repo, '.claude', 'CLAUDE.md'), 'y'.repeat(MAX_PROJECT_INSTRUCTIONS_BYTES - 5));
    const found = await collectProjectInstructions(repo, NAMES);
    expect(found.files).toEqual([join(repo, 'AGENTS.md')]);
    expect(found.text).toContain('shared rule');
    expect(found.skipped).toEqual([
      expect.stringMatching(
        /^.*\.claude\/CLAUDE\.md was not given to the agent: it is 65531 bytes, more than the 65524 bytes of instructions left/,
      ),
    ]);
  });

  it('outside a git checkout, looks in the run directory alone', async () => {
    const plain = join(dir, 'plain', 'sub');
    await mkdir(plain, { recursive: true });
    await writeFile(join(dir, 'plain', 'CLAUDE.md'), 'parent\n');
    await writeFile(join(plain, 'CLAUDE.md'), 'here\n');
    const found = await collectProjectInstructions(plain, NAMES);
    expect(found.files).toEqual([join(plain, 'CLAUDE.md')]);
  });

  it('passes over a `.git` that git would not take (an empty directory, a file without gitdir:)', async () => {
    const stray = join(dir, 'stray');
    const plain = join(stray, 'a', 'sub');
    await mkdir(join(stray, '.git'), { recursive: true });
    await mkdir(plain, { recursive: true });
    await writeFile(join(stray, 'a', '.git'), 'not a pointer\n');
    await writeFile(join(stray, 'CLAUDE.md'), 'above\n');
    await writeFile(join(stray, 'a', 'CLAUDE.md'), 'parent\n');
    await writeFile(join(plain, 'CLAUDE.md'), 'here\n');
    const found = await collectProjectInstructions(plain, NAMES);
    expect(found.files).toEqual([join(plain, 'CLAUDE.md')]);
  });
});
