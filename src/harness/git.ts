/**
 * Runs `git` in a repository baton does not trust.
 *
 * A repository's own `.git/config` (and any file it includes) can name commands that git runs on
 * ordinary operations: `core.fsmonitor` (on `add`, `status`, `diff`), filter drivers'
 * `clean` / `smudge` / `process` (on `add`, `checkout`, `worktree add`), hooks through
 * `core.hooksPath` or `.git/hooks` (`post-checkout` on `worktree add`), `diff.external` and
 * `diff.<driver>.command` / `textconv` (on `diff`). An agent that could write `.git/config`
 * during a run would otherwise get a command run by baton, outside the agent's sandbox, after
 * the run. Every call here therefore:
 * - starts from an environment built from nothing (no inherited `GIT_*`; system config off,
 *   `GIT_CONFIG_GLOBAL` kept only when the caller passes it),
 * - disables fsmonitor, hooks, external diff and pagers on the command line (`-c` wins over
 *   every config file),
 * - lists the filter drivers every config scope defines (includes followed) and blanks each
 *   one's commands (git treats an empty filter command as "no filter"; git 2.39 `convert.c`),
 * - never recurses into submodules.
 *
 * Source of the config keys: git-config(1), gitattributes(5), githooks(5), git 2.39.
 */
import { BatonError } from '../core/errors.js';
import { execGit, type GitOptions, type GitResult } from './git-exec.js';
import { readFilterOverrides } from './git-filter-overrides.js';
import { HARDENING } from './git-hardening.js';

export type { GitOptions, GitResult } from './git-exec.js';
export { pinConfigWithoutFilters } from './git-config-pin.js';
export { readFilterOverrides, readFilterOverridesAndWorktree } from './git-filter-overrides.js';

/**
 * Runs `git ARGS` in `options.cwd` with every config-named command switched off (see the module
 * comment). `diff`, `log` and `show` also get `--no-ext-diff --no-textconv` from the caller's
 * args being checked here.
 *
 * @returns exit code, stdout and stderr (UTF-8 text).
 * @throws BatonError `git_failed` when git cannot be started, times out, or exits non-zero
 *   (unless `allowFailure`); the message carries git's first stderr line.
 */
export async function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const sub = args[0];
  if (
    (sub === 'diff' || sub === 'log' || sub === 'show') &&
    !(args.includes('--no-ext-diff') && args.includes('--no-textconv'))
  ) {
    throw new TypeError(`runGit: git ${sub} needs --no-ext-diff and --no-textconv`);
  }
  const overrides = options.filterOverrides ?? (await readFilterOverrides(options));
  const result = await execGit([...HARDENING, ...args], { ...options, env: { ...options.env, ...overrides } });
  if (result.exitCode !== 0 && !options.allowFailure) {
    const first = result.stderr.split('\n').find((l) => l.trim()) ?? `exit ${result.exitCode}`;
    throw new BatonError('git_failed', `git ${sub ?? ''} failed in ${options.cwd}: ${first.trim()}`, {
      details: { cwd: options.cwd, exitCode: result.exitCode },
    });
  }
  return result;
}
