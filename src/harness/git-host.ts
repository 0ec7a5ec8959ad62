/**
 * The values of the service's own environment git runs with: `PATH` (where git is found) and
 * `HOME` (where its global config is). Every git command builds the rest of its environment
 * from nothing (see `git-hardening.ts`).
 */

/** `PATH` and `HOME` for git, as the service's environment has them (either may be unset). */
export interface GitHost {
  readonly PATH?: string | undefined;
  readonly HOME?: string | undefined;
}

let processHost: GitHost | undefined;

/**
 * Sets the {@link GitHost} of every git command whose caller passes none: the entry point's
 * environment, once at start. Given the live `process.env`, later changes to it are followed
 * (a test that moves `HOME` sees git move with it).
 */
export function useGitHost(host: GitHost): void {
  processHost = host;
}

/**
 * The {@link GitHost} the entry point set with {@link useGitHost}.
 *
 * @throws Error when no entry point set one: a process that runs git without going through
 *   `main` (or the test setup) is a wiring bug, not a user's mistake.
 */
export function processGitHost(): GitHost {
  if (processHost === undefined) {
    throw new Error('git has no PATH or HOME: the entry point must call useGitHost() before any git command');
  }
  return processHost;
}
