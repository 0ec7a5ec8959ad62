/**
 * How `runGit` reports a git that cannot be started, hangs, floods its output or dies by a signal
 * (src/harness/git-exec.ts starts git with node:child_process): each is a `git_failed`
 * BatonError, the process is gone afterwards, and output is decoded whole.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/core/errors.js';
import { runGit } from '../../src/harness/git.js';
import { alive, fakeGit } from '../support/fake-git.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-git-exec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isBatonError(err)) throw new Error(`expected a BatonError, got ${String(err)}`);
  return { code: err.code, message: err.message };
}

describe('runGit process handling', () => {
  it('fails with git_failed when git is not on PATH', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const err = await failure(runGit(['status'], { cwd: dir, path: empty, filterOverrides: {} }));
    expect(err.code).toBe('git_failed');
    expect(err.message).toMatch(/git status could not run: .*ENOENT/);
  });

  it('kills a git that runs past its time limit and says so', async () => {
    const pidFile = join(dir, 'slow.pid');
    const path = fakeGit(dir, 'slow', `echo $$ > ${pidFile}\nexec sleep 30`);
    const err = await failure(runGit(['status'], { cwd: dir, path, timeoutMs: 2_000, filterOverrides: {} }));
    expect(err).toMatchObject({ code: 'git_failed' });
    expect(err.message).toContain('timed out after 2000 ms');
    // The fix names where to look, not git's installation.
    expect(err.message).toContain(`Check ${dir} for a file git blocks on reading`);
    // The pid is written before the sleep starts; a git killed before it wrote it is gone too.
    if (existsSync(pidFile)) expect(alive(Number(readFileSync(pidFile, 'utf8').trim()))).toBe(false);
  });

  it('kills a git whose output passes the limit, without keeping it', async () => {
    const path = fakeGit(dir, 'flood', 'exec yes flood');
    const err = await failure(runGit(['status'], { cwd: dir, path, maxBufferBytes: 100_000, filterOverrides: {} }));
    expect(err).toMatchObject({ code: 'git_failed' });
    expect(err.message).toContain('its output passed 100000 bytes');
  });

  it('reports a git killed by a signal, not an exit code', async () => {
    const path = fakeGit(dir, 'killed', 'kill -9 $$');
    const err = await failure(runGit(['status'], { cwd: dir, path, allowFailure: true, filterOverrides: {} }));
    expect(err).toMatchObject({ code: 'git_failed' });
    expect(err.message).toContain('killed by SIGKILL');
  });

  it('returns exit code, stdout and stderr, with multi-byte text cut across writes intact', async () => {
    // "é" is 0xC3 0xA9: the two bytes go out in two writes with a pause between them.
    const path = fakeGit(dir, 'split', `printf '\\303'; sleep 0.1; printf '\\251 ok'; printf 'warn' >&2; exit 3`);
    const result = await runGit(['status'], { cwd: dir, path, allowFailure: true, filterOverrides: {} });
    expect(result).toEqual({ exitCode: 3, stdout: 'é ok', stderr: 'warn' });
  });
});
