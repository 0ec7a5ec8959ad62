/**
 * A throwaway machine for tests that run `baton` as a user would: a HOME, a workspace root with
 * a git repo in it, a BATON_HOME, the base environment (the pinned CLIs first on PATH) and, when
 * `DATABASE_URL` is set, a fresh PostgreSQL database of its own.
 */
import { execa } from 'execa';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase } from './database.js';

/** The directories and environment of a test home. */
export interface TestHome {
  dir: string;
  home: string;
  /** The one workspace root. */
  root: string;
  /** A git repo inside the root. */
  repo: string;
  batonHome: string;
  /** An empty directory first on PATH, for stand-in executables a test links in. */
  bin: string;
  /** HOME, PATH, USER, BATON_HOME, a canary ANTHROPIC_API_KEY (and DATABASE_URL, with a canary password, on PostgreSQL); add to it before starting baton. */
  env: Record<string, string>;
  /** Drops the database and removes every file. */
  dispose(): Promise<void>;
}

/** The canary `ANTHROPIC_API_KEY` of every test home (test/support/canaries.ts). */
export const ANTHROPIC_KEY_CANARY = 'sk-ant-canary-must-show-nowhere-5b7e';
/** The canary password put in a `DATABASE_URL` without one (the test server trusts local connections). */
export const DATABASE_PASSWORD_CANARY = 'canary-db-password-3c9f';

/** `url` with {@link DATABASE_PASSWORD_CANARY} as its password when it has none. */
function withCanaryPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') return url;
  parsed.password = DATABASE_PASSWORD_CANARY;
  return parsed.toString();
}

/** Creates a test home under the system temp dir; `prefix` names it. */
export async function makeTestHome(prefix: string, binDirs: readonly string[]): Promise<TestHome> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const home = join(dir, 'home');
  const root = join(dir, 'work');
  const repo = join(root, 'repo');
  const batonHome = join(dir, 'baton-home');
  const bin = join(dir, 'bin');
  for (const path of [home, repo, batonHome, bin]) await mkdir(path, { recursive: true });
  await execa('git', ['init', '-q', repo]);
  const env: Record<string, string> = {
    HOME: home,
    PATH: [bin, ...binDirs, process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    USER: process.env.USER ?? userInfo().username,
    BATON_HOME: batonHome,
    // A secret baton reads only to keep it out of logs and runs: its canary must show nowhere.
    ANTHROPIC_API_KEY: ANTHROPIC_KEY_CANARY,
  };
  let drop: (() => Promise<void>) | undefined;
  if (process.env.DATABASE_URL) {
    const created = await createPostgresDatabase(process.env.DATABASE_URL);
    env.DATABASE_URL = withCanaryPassword(created.url);
    drop = created.drop;
  }
  return {
    dir,
    home,
    root,
    repo,
    batonHome,
    bin,
    env,
    dispose: async () => {
      await drop?.();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
