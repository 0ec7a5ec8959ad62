/**
 * Runs the built `baton` command (`dist/cli/baton.js`) as a user would, in a prepared home:
 * a git repo inside the one workspace root, a config that approves runs and points codex and
 * claude at fake model servers, and a fresh PostgreSQL database when `DATABASE_URL` is set.
 */
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase } from './db.js';

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
  baton(args: string[], options?: { cwd?: string; timeoutMs?: number }): Promise<CliResult>;
  dispose(): Promise<void>;
}

/** Options of {@link makeCliHome}. */
export interface CliHomeOptions {
  binDirs: string[];
  /** Extra config lines, e.g. `codex_home = "…"` under `[harness]`. */
  harnessToml: string;
}

export async function makeCliHome(options: CliHomeOptions): Promise<CliHome> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-cli-'));
  const home = join(dir, 'home');
  const root = join(dir, 'work');
  const repo = join(root, 'repo');
  const batonHome = join(dir, 'baton-home');
  await mkdir(home, { recursive: true });
  await mkdir(repo, { recursive: true });
  await mkdir(batonHome, { recursive: true });
  await execa('git', ['init', '-q', repo]);
  await writeFile(
    join(batonHome, 'config.toml'),
    ['[harness]', 'approved = true', options.harnessToml, '[workspace]', `roots = [${JSON.stringify(root)}]`, ''].join('\n'),
  );
  const env: Record<string, string> = {
    HOME: home,
    PATH: [...options.binDirs, process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    USER: process.env.USER ?? userInfo().username,
    BATON_HOME: batonHome,
  };
  let drop: (() => Promise<void>) | undefined;
  if (process.env.DATABASE_URL) {
    const created = await createPostgresDatabase(process.env.DATABASE_URL);
    env.DATABASE_URL = created.url;
    drop = created.drop;
  }
  return {
    dir,
    repo,
    batonHome,
    env,
    baton: async (args, runOptions = {}) => {
      const result = await execa(process.execPath, [CLI, ...args], {
        env,
        extendEnv: false,
        cwd: runOptions.cwd ?? repo,
        stdin: 'ignore',
        reject: false,
        timeout: runOptions.timeoutMs ?? 60_000,
      });
      return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
    },
    dispose: async () => {
      await drop?.();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
