/**
 * Attack: `runGit`'s own time limit (src/harness/git-exec.ts `execGit`, on node:child_process)
 * must bound the call whatever git leaves behind. A git that starts a child sharing its
 * stdout (a hook, a helper, a `sh -c` wrapper: any descendant) and then hangs or exits keeps the
 * pipe open after git itself is gone; waiting for 'close' alone then waits for that descendant,
 * past the limit (here: 60 s for a 1 s limit).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/core/errors.js';
import { runGit } from '../../src/harness/git.js';
import { alive, fakeGit } from '../support/fake-git.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-attack-git-held-'));
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

async function settleWithin(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([
      promise.then(
        (v) => v,
        (e: unknown) => e,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe("runGit time limit with a descendant holding git's output", () => {
  it('fails at the limit when git hangs and a child of it holds stdout', async () => {
    const pidFile = join(dir, 'hang.pid');
    const path = fakeGit(dir, 'hang', `sleep 60 & echo $! > ${pidFile}\nwait`);
    const outcome = await settleWithin(
      runGit(['status'], { cwd: dir, path, timeoutMs: 1_000, filterOverrides: {} }),
      8_000,
    );
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    pids.push(child);
    expect(isBatonError(outcome, 'git_failed') ? 'git_failed' : outcome).toBe('git_failed');
    expect((outcome as Error).message).toContain('timed out after 1000 ms');
    // git's descendants go with it (killed at once; reaped by whoever inherited them, so poll)
    for (let i = 0; i < 40 && alive(child); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(child)).toBe(false);
  });

  it('fails at the limit when git exited and a background child still holds stdout', async () => {
    const pidFile = join(dir, 'bg.pid');
    const path = fakeGit(dir, 'bg', `sleep 60 & echo $! > ${pidFile}\necho done`);
    const outcome = await settleWithin(
      runGit(['status'], { cwd: dir, path, timeoutMs: 1_000, filterOverrides: {} }),
      8_000,
    );
    pids.push(Number(readFileSync(pidFile, 'utf8').trim()));
    expect(isBatonError(outcome, 'git_failed') ? 'git_failed' : outcome).toBe('git_failed');
  });
});
