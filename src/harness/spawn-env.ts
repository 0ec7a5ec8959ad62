/**
 * The child's environment, rebuilt from nothing: no service secret (chat tokens,
 * `DATABASE_URL`) can reach a vendor CLI because nothing is inherited.
 */
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import type { Vendor, VendorHomes } from './vendors/types.js';

/** The few service-environment values a child may see. */
export interface BaseEnv {
  HOME: string;
  PATH: string;
  TERM?: string | undefined;
  USER?: string | undefined;
  /** The `pass_env` entries that are set (see `selectPassEnv`); the fixed names above win. */
  passed?: Readonly<Record<string, string>>;
}

/**
 * Resolves `CODEX_HOME` and `CLAUDE_CONFIG_DIR`: config key, then service env, then the vendor
 * default under HOME. The doctor uses the same resolver.
 */
export function resolveVendorHomes(
  config: { codexHome?: string | undefined; claudeConfigDir?: string | undefined },
  env: { CODEX_HOME?: string | undefined; CLAUDE_CONFIG_DIR?: string | undefined },
  home: string,
): VendorHomes {
  const fromEnv = (value: string | undefined): string | undefined => {
    if (value === undefined || value === '') return undefined;
    // The CLI would not expand `~`: left as is, `~/.codex` names a directory inside the run's cwd.
    return value === '~' ? home : value.startsWith('~/') ? join(home, value.slice(2)) : value;
  };
  return {
    codexHome: config.codexHome ?? fromEnv(env.CODEX_HOME) ?? join(home, '.codex'),
    claudeConfigDir: config.claudeConfigDir ?? fromEnv(env.CLAUDE_CONFIG_DIR) ?? join(home, '.claude'),
  };
}

/**
 * The user name for the child: the service's `USER`, else the passwd entry of our uid.
 *
 * @throws BatonError `user_unresolved` when neither exists.
 */
export function resolveUser(base: BaseEnv, lookup: () => string = () => userInfo().username): string {
  if (base.USER) return base.USER;
  try {
    const name = lookup();
    if (name) return name;
  } catch (err) {
    throw new BatonError(
      'user_unresolved',
      'Cannot tell which user runs baton: USER is unset and the passwd database has no entry for this uid. Set USER in the service environment.',
      { cause: err },
    );
  }
  throw new BatonError(
    'user_unresolved',
    'Cannot tell which user runs baton: USER is unset and the passwd entry has no name. Set USER in the service environment.',
  );
}

/**
 * Builds the complete environment of a run's child: the `pass_env` names that are set, then
 * `HOME`, `PATH` (the caller drops npm's run-script directories), `TERM`, `USER`, `BATON_RUN_ID` and the
 * vendor's own names.
 *
 * @throws BatonError `user_unresolved` (see {@link resolveUser}).
 */
export function buildChildEnv(
  vendor: Vendor,
  base: BaseEnv,
  homes: VendorHomes,
  runId: string,
): Record<string, string> {
  return {
    ...base.passed,
    HOME: base.HOME,
    PATH: absolutePath(base.PATH),
    TERM: base.TERM || 'dumb',
    USER: resolveUser(base),
    BATON_RUN_ID: runId,
    ...vendor.vendorEnv(homes),
  };
}

/**
 * `PATH` without empty or relative entries. POSIX reads an empty entry (a stray `:` from
 * `$EXTRA:$PATH` with `EXTRA` unset) as the current directory, and a relative one against it:
 * for a run that is the repository, whose own `node` would then start codex's
 * `#!/usr/bin/env node` launcher, unsandboxed.
 */
export function absolutePath(pathEnv: string): string {
  return pathEnv
    .split(':')
    .filter((entry) => entry.startsWith('/'))
    .join(':');
}
