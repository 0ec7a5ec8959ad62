/**
 * What a run's `.patch` carries, with real git: git's bytes exactly (a Latin-1 file's change
 * applies with `git apply` on a fresh clone), and never a file that was ignored before the run
 * (a run that only edits `.gitignore` un-ignores `.env`) or that looks like a secret by name or
 * content: those are listed by name, left out, and given only on the machine on request.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { diffSinceSnapshot, snapshotTree } from '../../src/harness/diff.js';
import { fullPatch } from '../../src/harness/patch-record.js';
import { CLI } from '../support/cli.js';
import { git, scratchDir } from '../support/git-repo.js';

const dir = scratchDir('baton-patch-contents-');

async function repo(name: string, files: Record<string, string | Buffer>): Promise<string> {
  const path = join(dir, name);
  await mkdir(path, { recursive: true });
  git(path, 'init', '-q');
  for (const [file, content] of Object.entries(files)) {
    await mkdir(join(path, file, '..'), { recursive: true });
    await writeFile(join(path, file), content);
  }
  git(path, 'add', '-A');
  git(path, 'commit', '-qm', 'start');
  return path;
}

/** Applies `patch` (a file) to a fresh clone of `path` at its commit; returns the clone. */
async function applyOnClone(path: string, patch: string, name: string): Promise<string> {
  const clone = join(dir, name);
  await execa('git', ['clone', '-q', path, clone]);
  await execa('git', ['apply', '--check', patch], { cwd: clone });
  await execa('git', ['apply', patch], { cwd: clone });
  return clone;
}

describe("a run's patch", () => {
  it("keeps git's bytes: a Latin-1 file's change applies on a fresh clone", async () => {
    const before = Buffer.from('caf\xe9 cr\xe8me\nna\xefve\n', 'latin1');
    const after = Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve\n', 'latin1');
    const path = await repo('latin1', { 'menu.txt': before });
    const start = await snapshotTree(path, join(dir, 'latin1.index'));
    await writeFile(join(path, 'menu.txt'), after);
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'latin1-end.index'),
      join(dir, 'latin1.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.patchPath).toBe(join(dir, 'latin1.patch'));
    const patch = await readFile(diff!.patchPath!);
    expect(patch.includes(Buffer.from('br\xfbl\xe9e', 'latin1'))).toBe(true);
    expect(patch.includes(Buffer.from('\ufffd'))).toBe(false);
    expect(diff!.patchBytes).toBe(patch.length);
    const clone = await applyOnClone(path, diff!.patchPath!, 'latin1-clone');
    expect(await readFile(join(clone, 'menu.txt'))).toEqual(after);
  });

  it('leaves out a file that was ignored before the run, and files that look like secrets, naming each', async () => {
    const path = await repo('secrets', { '.gitignore': '.env\n*.log\n', 'app.js': 'let a = 1;\n' });
    await writeFile(join(path, '.env'), 'TELEGRAM_BOT_TOKEN=123:canary-in-dotenv\n');
    await writeFile(join(path, 'debug.log'), 'ignored and staying ignored\n');
    const start = await snapshotTree(path, join(dir, 'secrets.index'));
    // The run edits only .gitignore (un-ignoring .env), adds a key, a config with a token, and code.
    await writeFile(join(path, '.gitignore'), '*.log\n');
    await writeFile(join(path, 'deploy.pem'), 'not even a real key\n');
    await writeFile(join(path, 'config.json'), '{"aws": "AKIAIOSFODNN7EXAMPLE"}\n');
    await mkdir(join(path, 'keys'));
    await writeFile(
      join(path, 'keys', 'notes.txt'),
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
    );
    await writeFile(join(path, 'app.js'), 'let a = 2; // changed\n');
    const batonHome = join(dir, 'baton-home');
    const runDir = join(batonHome, 'harness', 'runs', 'hr_0123456789ab');
    await mkdir(runDir, { recursive: true });
    const diff = await diffSinceSnapshot(
      start!,
      join(runDir, 'end.index'),
      join(runDir, 'hr_0123456789ab.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.leftOut).toEqual([
      { path: '.env', why: 'ignored_before' },
      { path: 'config.json', why: 'secret_content' },
      { path: 'deploy.pem', why: 'secret_name' },
      { path: 'keys/notes.txt', why: 'secret_content' },
    ]);
    const patch = await readFile(diff!.patchPath!, 'utf8');
    expect(patch).not.toContain('canary-in-dotenv');
    expect(patch).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(patch).not.toContain('PRIVATE KEY');
    expect(patch).toContain('+let a = 2; // changed');
    expect(patch).toContain('+++ b/.gitignore');
    const clone = await applyOnClone(path, diff!.patchPath!, 'secrets-clone');
    expect(await readFile(join(clone, 'app.js'), 'utf8')).toBe('let a = 2; // changed\n');

    // On the machine, the owner may ask for everything.
    const full = await fullPatch(runDir);
    expect(full.toString('utf8')).toContain('canary-in-dotenv');
    expect(full.toString('utf8')).toContain('AKIAIOSFODNN7EXAMPLE');
    await writeFile(join(dir, 'full.patch'), full);
    const fullClone = await applyOnClone(path, join(dir, 'full.patch'), 'secrets-full-clone');
    expect(await readFile(join(fullClone, '.env'), 'utf8')).toContain('canary-in-dotenv');

    // The same through the command, as bytes on stdout.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, BATON_HOME: batonHome };
    const asSent = await execa(process.execPath, [CLI, 'patch', 'hr_0123456789ab'], {
      env,
      extendEnv: false,
      encoding: 'buffer',
      stripFinalNewline: false,
    });
    expect(Buffer.compare(asSent.stdout, await readFile(diff!.patchPath!))).toBe(0);
    const everything = await execa(process.execPath, [CLI, 'patch', 'hr_0123456789ab', '--include-ignored'], {
      env,
      extendEnv: false,
      encoding: 'buffer',
      stripFinalNewline: false,
    });
    expect(Buffer.compare(everything.stdout, full)).toBe(0);
    const refused = await execa(process.execPath, [CLI, 'patch', '../../etc'], {
      env,
      extendEnv: false,
      reject: false,
    });
    expect(refused.exitCode).toBe(2);
    const none = await execa(process.execPath, [CLI, 'patch', 'hr_ffffffffffff'], {
      env,
      extendEnv: false,
      reject: false,
    });
    expect(none.stderr).toContain('[patch_unavailable]');
  });

  it('leaves nothing out of an ordinary change', async () => {
    const path = await repo('plain', { 'a.txt': 'one\n', '.env.example': 'TOKEN=\n' });
    const start = await snapshotTree(path, join(dir, 'plain.index'));
    await writeFile(join(path, 'a.txt'), 'two\n');
    await writeFile(join(path, 'b.txt'), 'new\n');
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'plain-end.index'),
      join(dir, 'plain.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.leftOut ?? []).toEqual([]);
    expect(await readFile(diff!.patchPath!, 'utf8')).toContain('+new');
  });

  it("attaches no patch when a changed file's name is not UTF-8: no exclude pathspec could match it", async () => {
    const path = await repo('bytes', { 'a.txt': 'one\n', '.gitignore': '*.secret\n' });
    const start = await snapshotTree(path, join(dir, 'bytes.index'));
    // `k\xffey.env`: a secret-looking name whose bytes a decoded pathspec would miss.
    await writeFile(
      Buffer.concat([Buffer.from(`${path}/k`), Buffer.from([0xff]), Buffer.from('ey.env')]),
      'TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n',
    );
    const diff = await diffSinceSnapshot(
      start!,
      join(dir, 'bytes-end.index'),
      join(dir, 'bytes.patch'),
      1024 * 1024,
      silentLogger(),
    );
    expect(diff?.patchPath).toBeUndefined();
    expect(diff?.patchMissing).toMatch(/not UTF-8/);
  });
});
