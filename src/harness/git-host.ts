/**
 * The values of the service's own environment git runs with: `PATH` (where git is found) and
 * `HOME` (where its global config is). Every git command builds the rest of its environment
 * from nothing (see `git-hardening.ts`).
 */

/** `PATH` and `HOME` for git, as the service's environment has them (either may be unset). */
export interface GitHost {
  PATH?: string | undefined;
  HOME?: string | undefined;
}

/**
 * This process's `PATH` and `HOME`, read at each call (a caller that changed them since start
 * is followed): the {@link GitHost} of a git command whose caller passes none. The one place
 * git's code reads the process environment, so that passing it in from the service inputs
 * replaces this function alone.
 */
export function processGitHost(): GitHost {
  return { PATH: process.env.PATH, HOME: process.env.HOME };
}
