/**
 * Runs the built `baton` command (`dist/cli/baton.js`) as a user would, in a prepared home:
 * a git repo inside the one workspace root, a config that approves runs and points codex and
 * claude at fake model servers, and a fresh PostgreSQL database when `DATABASE_URL` is set.
 */
import { execa } from 'execa';
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
  /** Runs `baton ARGS…` to completion (never rejects; inspect `exitCode`). */
  baton(args: string[], options?: { cwd?: string; timeoutMs?: number; env?: Record<string, string> }): Promise<CliResult>;
  dispose(): Promise<void>;
}

/** Options of {@link makeCliHome}. */
export interface CliHomeOptions {
  binDirs: string[];
  /** Extra config lines, e.g. `codex_home = "…"` under `[harness]`. */
  harnessToml: string;
}

export async function makeCliHome(options: CliHomeOptions): Promise<CliHome> {
  const base = await makeTestHome('baton-cli-', options.binDirs);
  const { dir, root, repo, batonHome, env } = base;
  await writeFile(
    join(batonHome, 'config.toml'),
    ['[harness]', 'approved = true', options.harnessToml, '[workspace]', `roots = [${JSON.stringify(root)}]`, ''].join('\n'),
  );
  return {
    dir,
    repo,
    batonHome,
    env,
    baton: async (args, runOptions = {}) => {
      const result = await execa(process.execPath, [CLI, ...args], {
        env: { ...env, ...runOptions.env },
        extendEnv: false,
        cwd: runOptions.cwd ?? repo,
        stdin: 'ignore',
        reject: false,
        timeout: runOptions.timeoutMs ?? 60_000,
      });
      return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
    },
    dispose: base.dispose,
  };
}
