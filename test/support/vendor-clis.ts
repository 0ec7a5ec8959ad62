/**
 * Installs the vendor CLIs the end-to-end tests drive (`codex`, `claude`) at pinned versions,
 * each into a directory of its own outside the project.
 *
 * Why outside: a user's `npm start` must find the user's own CLI on PATH, never one hidden in
 * the project's node_modules. Tests put {@link InstalledCli.binDir} first on the PATH of the
 * processes they spawn instead.
 *
 * Crash safety: an install runs into a temporary sibling directory and is renamed into place
 * only after `--version` printed the pinned version, so a killed install never leaves a
 * half-installed CLI that a later run would reuse. A `mkdir` lock keeps two processes from
 * installing the same CLI at once; a lock whose owner died, or that is older than
 * {@link EnsureCliOptions.lockStaleMs}, is broken.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';

/**
 * The vendor CLI versions the tests pin: the one place they live. Every test that runs a real
 * CLI runs the versions below, or the ones named by `BATON_TEST_CODEX_VERSION` /
 * `BATON_TEST_CLAUDE_VERSION` (`npm run test:vendors` with them set checks vendor drift; see the
 * README's "Development").
 */
export const PINNED_CLI_VERSIONS = { codex: '0.171.0', claude: '2.1.332' } as const;

/** A version as npm takes it: digits and dots, optionally a prerelease tag. */
function cliVersion(envName: string, pinned: string): string {
  const asked = process.env[envName]?.trim();
  if (!asked) return pinned;
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(asked))
    throw new Error(`${envName}=${JSON.stringify(asked)} is not a version such as ${pinned}`);
  return asked;
}

/** The `@openai/codex` version the tests run (`codex --version` → `codex-cli 0.171.0`). */
export const CODEX_CLI_VERSION = cliVersion('BATON_TEST_CODEX_VERSION', PINNED_CLI_VERSIONS.codex);
/** The `@anthropic-ai/claude-code` version the tests run (`claude --version` → `2.1.332 (Claude Code)`). */
export const CLAUDE_CLI_VERSION = cliVersion('BATON_TEST_CLAUDE_VERSION', PINNED_CLI_VERSIONS.claude);

/** A CLI installed by {@link ensureCodexCli} or {@link ensureClaudeCli}. */
export interface InstalledCli {
  /** Absolute path of the CLI's npm launcher (`<binDir>/codex`). */
  bin: string;
  /** Directory holding only the launcher(s); put it first on PATH. */
  binDir: string;
  /** The pinned version that `--version` printed, e.g. `0.171.0`. */
  version: string;
}

/** Options of {@link ensureCodexCli} and {@link ensureClaudeCli}. */
export interface EnsureCliOptions {
  /**
   * Root under which each CLI gets `<name>-<version>/`.
   * @default `$BATON_TEST_TOOLS_DIR`, else `~/.cache/baton-test-tools`
   */
  toolsDir?: string;
  /** How long to wait for another process's install before giving up, in ms. @default 600_000 */
  lockWaitMs?: number;
  /** A lock older than this is taken to be left by a killed install, in ms. @default 900_000 */
  lockStaleMs?: number;
  /** Upper bound for `npm install`, in ms. @default 600_000 */
  installTimeoutMs?: number;
}

interface CliSpec {
  name: string;
  packageName: string;
  version: string;
  binName: string;
  /** Whether `--version` output names exactly this version. */
  printsVersion: (stdout: string) => boolean;
  /** Env for `--version` so the check writes nothing under the user's HOME. */
  scratchEnv: (scratchDir: string) => Record<string, string>;
}

const CODEX: CliSpec = {
  name: 'codex',
  packageName: '@openai/codex',
  version: CODEX_CLI_VERSION,
  binName: 'codex',
  printsVersion: (out) => out.trim() === `codex-cli ${CODEX_CLI_VERSION}`,
  // Without CODEX_HOME even `codex --version` creates ~/.codex/tmp/arg0-linux/… helper links.
  scratchEnv: (dir) => ({ CODEX_HOME: dir }),
};

const CLAUDE: CliSpec = {
  name: 'claude',
  packageName: '@anthropic-ai/claude-code',
  version: CLAUDE_CLI_VERSION,
  binName: 'claude',
  printsVersion: (out) => out.trim().startsWith(`${CLAUDE_CLI_VERSION} `),
  scratchEnv: (dir) => ({ CLAUDE_CONFIG_DIR: dir, DISABLE_AUTOUPDATER: '1' }),
};

/**
 * Makes sure `codex` {@link CODEX_CLI_VERSION} is installed (npm package `@openai/codex`, whose
 * native binary arrives through an aliased optionalDependency such as
 * `@openai/codex-linux-x64` → `npm:@openai/codex@0.171.0-linux-x64`).
 * Fast (one `codex --version`, ~150 ms) when already installed.
 * @throws Error when npm fails or the installed launcher does not print the pinned version.
 */
export function ensureCodexCli(options: EnsureCliOptions = {}): Promise<InstalledCli> {
  return ensureCli(CODEX, options);
}

/**
 * Makes sure `claude` {@link CLAUDE_CLI_VERSION} is installed (npm package
 * `@anthropic-ai/claude-code`), by the same mechanism as {@link ensureCodexCli}.
 * @throws Error when npm fails or the installed launcher does not print the pinned version.
 */
export function ensureClaudeCli(options: EnsureCliOptions = {}): Promise<InstalledCli> {
  return ensureCli(CLAUDE, options);
}

/** The root directory the CLIs are installed under (see {@link EnsureCliOptions.toolsDir}). */
export function defaultToolsDir(): string {
  return process.env['BATON_TEST_TOOLS_DIR'] ?? join(homedir(), '.cache', 'baton-test-tools');
}

async function ensureCli(spec: CliSpec, options: EnsureCliOptions): Promise<InstalledCli> {
  const toolsDir = options.toolsDir ?? defaultToolsDir();
  const dirName = `${spec.name}-${spec.version}`;
  const finalDir = join(toolsDir, dirName);
  await mkdir(toolsDir, { recursive: true });

  const ready = await probe(spec, finalDir);
  if (ready) return ready;

  const lockDir = join(toolsDir, `${dirName}.lock`);
  const acquired = await acquireLock(lockDir, {
    waitMs: options.lockWaitMs ?? 600_000,
    staleMs: options.lockStaleMs ?? 900_000,
    // Another process may finish the install while we wait; then there is nothing to do.
    isDone: async () => (await probe(spec, finalDir)) !== undefined,
  });
  if (!acquired) {
    const installedByOther = await probe(spec, finalDir);
    if (installedByOther) return installedByOther;
    throw new Error(`${spec.name} was reported installed in ${finalDir} but no longer probes as ${spec.version}`);
  }
  try {
    const installedMeanwhile = await probe(spec, finalDir);
    if (installedMeanwhile) return installedMeanwhile;
    await removeLeftovers(toolsDir, dirName);
    const tmpDir = join(toolsDir, `.${dirName}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await npmInstall(spec, tmpDir, options.installTimeoutMs ?? 600_000);
      const check = await runVersion(spec, tmpDir);
      if (!spec.printsVersion(check.stdout)) {
        throw new Error(
          `${spec.packageName}@${spec.version} installed into ${tmpDir} but \`${spec.binName} --version\` ` +
            `exited ${String(check.exitCode)} printing ${JSON.stringify(check.stdout)}; stderr: ` +
            `${check.stderr.slice(-2000)} (is the platform binary optionalDependency missing?)`,
        );
      }
      if (existsSync(finalDir)) {
        // A broken or foreign directory under our name: move it aside first so rename succeeds.
        const trash = `${finalDir}.trash-${randomBytes(4).toString('hex')}`;
        await rename(finalDir, trash);
        await rm(trash, { recursive: true, force: true });
      }
      await rename(tmpDir, finalDir);
    } finally {
      await rm(tmpDir, { recursive: true, force: true });
    }
    const installed = await probe(spec, finalDir);
    if (!installed) throw new Error(`${spec.name} disappeared from ${finalDir} right after install`);
    return installed;
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

/** Returns the install in `dir` if its launcher prints the pinned version. */
async function probe(spec: CliSpec, dir: string): Promise<InstalledCli | undefined> {
  const binDir = join(dir, 'node_modules', '.bin');
  const bin = join(binDir, spec.binName);
  if (!existsSync(bin)) return undefined;
  const { stdout } = await runVersion(spec, dir);
  return spec.printsVersion(stdout) ? { bin, binDir, version: spec.version } : undefined;
}

async function runVersion(
  spec: CliSpec,
  dir: string,
): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  const scratch = join(dir, '.version-check-home');
  await mkdir(scratch, { recursive: true });
  const result = await execa(join(dir, 'node_modules', '.bin', spec.binName), ['--version'], {
    env: { ...spec.scratchEnv(scratch), NO_COLOR: '1' },
    stdin: 'ignore',
    reject: false,
    timeout: 60_000,
  });
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
}

/**
 * npm settings a surrounding `npm test` may export as `npm_config_*` that would change what
 * this install does (e.g. `--omit=optional` drops the native binary, `--global` the prefix).
 */
const NPM_ENV_DENYLIST = new Set([
  'omit',
  'include',
  'global',
  'location',
  'prefix',
  'local_prefix',
  'production',
  'only',
  'dry_run',
  'package_lock_only',
  'os',
  'cpu',
  'libc',
  'workspace',
  'workspaces',
  'install_strategy',
  'global_style',
  'legacy_bundling',
  'save',
  'save_dev',
  'save_exact',
  'ignore_scripts',
  'before',
  'offline',
]);

async function npmInstall(spec: CliSpec, dir: string, timeoutMs: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    const lower = key.toLowerCase();
    if (lower.startsWith('npm_config_') && NPM_ENV_DENYLIST.has(lower.slice('npm_config_'.length))) {
      continue;
    }
    env[key] = value;
  }
  const args = [
    'install',
    '--prefix',
    dir,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--include=optional',
    '--no-package-lock',
    `${spec.packageName}@${spec.version}`,
  ];
  // cwd = the target dir so that no project .npmrc or package.json takes part.
  const result = await execa('npm', args, {
    cwd: dir,
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: timeoutMs,
    all: true,
  });
  if (result.exitCode !== 0 || result.timedOut) {
    throw new Error(
      `npm ${args.join(' ')} failed (exit ${String(result.exitCode)}${result.timedOut ? ', timed out' : ''}):\n` +
        `${(result.all ?? '').slice(-4000)}`,
    );
  }
}

/** Removes temp dirs and trash left by killed installs; only called while holding the lock. */
async function removeLeftovers(toolsDir: string, dirName: string): Promise<void> {
  for (const entry of await readdir(toolsDir)) {
    if (entry.startsWith(`.${dirName}.tmp-`) || entry.startsWith(`${dirName}.trash-`)) {
      // An orphaned npm may still be writing there; what is left gets removed next time.
      await rm(join(toolsDir, entry), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

interface LockOwner {
  pid: number;
  host: string;
  startedAtMs: number;
  token: string;
}

/** Takes the lock; resolves `false` instead when `isDone` says another process did the work. */
async function acquireLock(
  lockDir: string,
  opts: { waitMs: number; staleMs: number; isDone: () => Promise<boolean> },
): Promise<boolean> {
  const deadlineMs = Date.now() + opts.waitMs;
  for (;;) {
    try {
      await mkdir(lockDir);
      const owner: LockOwner = {
        pid: process.pid,
        host: hostname(),
        startedAtMs: Date.now(),
        token: randomBytes(8).toString('hex'),
      };
      await writeFile(join(lockDir, 'owner.json'), JSON.stringify(owner));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(lockDir);
    if (owner && isStale(owner, opts.staleMs)) {
      // Re-read right before breaking it, so a lock taken over meanwhile is left alone; the
      // rename is atomic, so only one waiter breaks a given lock.
      const again = await readOwner(lockDir);
      if (again?.token === owner.token) {
        const aside = `${lockDir}.stale-${randomBytes(4).toString('hex')}`;
        await rename(lockDir, aside).then(
          () => rm(aside, { recursive: true, force: true }),
          () => undefined,
        );
        continue;
      }
    }
    if (await opts.isDone()) return false;
    if (Date.now() > deadlineMs) {
      throw new Error(
        `gave up after ${opts.waitMs} ms waiting for install lock ${lockDir} held by ${JSON.stringify(owner)}`,
      );
    }
    await sleep(250);
  }
}

/** How long a lock may lack its owner file before it counts as left by a killed process. */
const OWNERLESS_LOCK_STALE_MS = 30_000;

async function readOwner(lockDir: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await readFile(join(lockDir, 'owner.json'), 'utf8')) as LockOwner;
  } catch {
    // Killed between mkdir and writeFile (or still in between): judge by the directory's age.
    try {
      const { mtimeMs } = await stat(lockDir);
      return { pid: -1, host: '', startedAtMs: mtimeMs, token: `ownerless-${mtimeMs}` };
    } catch {
      return undefined;
    }
  }
}

function isStale(owner: LockOwner, staleMs: number): boolean {
  const ageMs = Date.now() - owner.startedAtMs;
  if (owner.pid === -1) return ageMs > OWNERLESS_LOCK_STALE_MS;
  if (ageMs > staleMs) return true;
  if (owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
