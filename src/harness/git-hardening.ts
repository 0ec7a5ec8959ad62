/**
 * What every git command baton runs starts from (see `git.ts` for why): the `-c` options that
 * switch off each command a config file can name, and an environment built from nothing.
 */
import { processGitHost, type GitHost } from './git-host.js';
import { absolutePath } from './spawn-env.js';

/** `-c` options that switch off every command a config file can name for the operations baton runs. */
export const HARDENING = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'diff.external=',
  '-c',
  'core.pager=cat',
  '-c',
  'submodule.recurse=false',
  '-c',
  'core.sshCommand=false',
  '-c',
  'protocol.allow=never',
  '-c',
  'credential.helper=',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

/**
 * The environment git runs with: `PATH` (absolute entries only), `HOME`, the fixed values that
 * keep git quiet and off the system config, then `options.env` (`GitOptions.path`, `.env` and
 * `.host`).
 *
 * @throws TypeError for an `options.env` key that is not `GIT_*`.
 */
export function gitEnv(options: {
  path?: string;
  env?: Record<string, string>;
  host?: GitHost;
}): Record<string, string> {
  const host = options.host ?? processGitHost();
  const env: Record<string, string> = {
    PATH: absolutePath(options.path ?? host.PATH ?? '/usr/bin:/bin'),
    HOME: host.HOME ?? '/',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_OPTIONAL_LOCKS: '0',
  };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!key.startsWith('GIT_')) throw new TypeError(`runGit: only GIT_* variables may be passed, got ${key}`);
    env[key] = value;
  }
  return env;
}
