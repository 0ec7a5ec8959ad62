/**
 * Runs the built `baton` command (`dist/cli/baton.js`) as a user would, in a prepared home:
 * a git repo inside the one workspace root, a config that approves runs and points codex and
 * claude at fake model servers, and a fresh PostgreSQL database when `DATABASE_URL` is set.
 */
import type { ChildProcess } from 'node:child_process';
import { execa } from 'execa';
import { onTestFinished } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTestHome } from './home.js';

export const CLI = fileURLToPath(new URL('../../dist/cli/baton.js', import.meta.url));

/** How a `baton` invocation ended. */
export interface CliResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** A prepared home for CLI tests. */
export interface CliHome {
  dir: string;
  repo: string;
  batonHome: string;
  env: Record<string, string>;
  /**
   * Runs `baton ARGS…` to completion (never rejects; inspect `exitCode`). A command still running
   * when its test ends (a timeout) is stopped: SIGTERM (`baton ask` cancels its run and releases
   * the database), then SIGKILL.
   */
  baton(
    args: string[],
    options?: { cwd?: string; timeoutMs?: number; env?: Record<string, string> },
  ): Promise<CliResult>;
  dispose(): Promise<void>;
}

/** Options of {@link makeCliHome}. */
export interface CliHomeOptions {
  binDirs: string[];
  /** Extra config lines, e.g. `codex_home = "…"` under `[harness]`. */
  harnessToml: string;
}

/** Grace between SIGTERM and SIGKILL for a command its test left running, in ms. */
const REAP_GRACE_MS = 10_000;

/**
 * Stops `child` when the current test finishes, if it still runs, so a timed-out test cannot
 * leave a `baton` process holding the embedded database lock for the tests after it. Outside a
 * test (in a hook) nothing is registered.
 */
export function reapOnTestEnd(
  child: Pick<ChildProcess, 'exitCode' | 'signalCode' | 'kill'>,
  done: PromiseLike<unknown>,
): void {
  try {
    onTestFinished(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const exited = Promise.resolve(done).then(
        () => true,
        () => true,
      );
      const graceOver = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), REAP_GRACE_MS).unref());
      if (!(await Promise.race([exited, graceOver]))) child.kill('SIGKILL');
      await exited;
    });
  } catch {
    // not inside a running test
  }
}

export async function makeCliHome(options: CliHomeOptions): Promise<CliHome> {
  const base = await makeTestHome('baton-cli-', options.binDirs);
  const { dir, root, repo, batonHome, env } = base;
  await writeFile(
    join(batonHome, 'config.toml'),
    ['[harness]', 'approved = true', options.harnessToml, '[workspace]', `roots = [${JSON.stringify(root)}]`, ''].join(
      '\n',
    ),
  );
  return {
    dir,
    repo,
    batonHome,
    env,
    baton: async (args, runOptions = {}) => {
      const child = execa(process.execPath, [CLI, ...args], {
        env: { ...env, ...runOptions.env },
        extendEnv: false,
        cwd: runOptions.cwd ?? repo,
        stdin: 'ignore',
        reject: false,
        // No wall-clock limit of its own (a loaded machine is slow, not wrong): the test's
        // timeout is the hang guard, and reapOnTestEnd stops the command when the test ends.
        ...(runOptions.timeoutMs === undefined ? {} : { timeout: runOptions.timeoutMs }),
      });
      reapOnTestEnd(child, child);
      const result = await child;
      return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
    },
    dispose: base.dispose,
  };
}
