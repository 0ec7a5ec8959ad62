/**
 * Listing the filter drivers a repository's config defines, as the environment overrides that
 * blank each one's commands for a git command baton runs there.
 */
import { execGit, type GitOptions } from './git-exec.js';
import { HARDENING } from './git-hardening.js';

/**
 * The environment overrides (`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`) that blank every filter
 * driver defined in any config scope git would read in `options.cwd` (includes followed); empty
 * when none is defined. {@link runGit} reads them for each command unless the caller passes them
 * in {@link GitOptions.filterOverrides}; read them again after anything may have changed the config.
 *
 * @throws BatonError `git_failed` as {@link runGit}.
 */
export async function readFilterOverrides(options: GitOptions): Promise<Record<string, string>> {
  return (await readFilterOverridesAndWorktree(options)).overrides;
}

/**
 * {@link readFilterOverrides}, and in the same git process the value of `core.worktree` (then
 * git's working tree may not be the directory holding `.git`; relative to the git directory).
 */
export async function readFilterOverridesAndWorktree(
  options: GitOptions,
): Promise<{ overrides: Record<string, string>; worktree: string | undefined }> {
  // -z: each entry is `key\nvalue\0` (`key\0` without a value), so a value holding a newline
  // cannot pass for a key.
  const listed = await execGit(
    [...HARDENING, 'config', '--includes', '-z', '--get-regexp', '^(filter\\.|core\\.worktree$)'],
    options,
  );
  // Exit 1: no key matched. Anything else is a broken config git will refuse anyway.
  if (listed.exitCode !== 0) return { overrides: {}, worktree: undefined };
  const drivers = new Set<string>();
  let worktree: string | undefined;
  for (const entry of listed.stdout.split('\0')) {
    const cut = entry.indexOf('\n');
    const key = cut < 0 ? entry : entry.slice(0, cut);
    if (key === 'core.worktree') worktree = cut < 0 ? '' : entry.slice(cut + 1);
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match?.[1]) drivers.add(match[1]);
  }
  // Passed as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n (command scope, like `-c`), never as `-c`:
  // git splits `-c` at the first `=`, so a driver named `x=y` would escape `-c filter.x=y.clean=`.
  const pairs: Array<[string, string]> = [];
  for (const name of drivers) {
    for (const key of ['clean', 'smudge', 'process']) pairs.push([`filter.${name}.${key}`, '']);
    pairs.push([`filter.${name}.required`, 'false']);
  }
  const env: Record<string, string> = {};
  if (pairs.length === 0) return { overrides: env, worktree };
  env['GIT_CONFIG_COUNT'] = String(pairs.length);
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { overrides: env, worktree };
}
