/**
 * The account the embedded PostgreSQL server runs as when baton runs as root. `initdb`, `pg_ctl`
 * and `postgres` refuse root ("cannot be run as root"), so, as the official PostgreSQL images do,
 * the server runs as an unprivileged system account that owns its data directory:
 * `baton-postgres`, created on first use (useradd(8) `--system`), else `nobody`.
 *
 * The programs are started through setpriv(1) with that uid and gid and one capability,
 * CAP_DAC_READ_SEARCH (capabilities(7), kept across exec as an ambient capability): root's home
 * is usually 0700, so without it the account could not even reach `$BATON_HOME/postgres` or the
 * log file. It lets the server read and search what it otherwise could not, never write: it writes
 * only what it owns (its data directory and its log file). Only root reaches its socket (the data
 * directory is 0700), so only baton talks to it.
 */
import { access, chown, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';

/** The account baton creates for the server when running as root. */
export const SERVER_ACCOUNT_NAME = 'baton-postgres';

/** An account the server runs as. */
export interface ServerAccount {
  name: string;
  uid: number;
  gid: number;
  /** setpriv(1), found at start. */
  setpriv: string;
}

/** Where system programs live, whatever PATH the service got (systemd's is minimal). */
const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** `name` in `pathEnv`'s absolute directories, then in {@link SYSTEM_DIRS}; undefined when in neither. */
async function findProgram(name: string, pathEnv: string | undefined): Promise<string | undefined> {
  for (const dir of [...(pathEnv ?? '').split(':').filter((d) => d.startsWith('/')), ...SYSTEM_DIRS]) {
    const file = join(dir, name);
    if (
      await access(file, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return file;
  }
  return undefined;
}

/**
 * Why, as root, the server cannot be run as another account here, or undefined when it can.
 * Looks only (creates nothing), for the engine choice and doctor. `pathEnv`: the environment's
 * `PATH`, searched before the system directories.
 */
export async function serverAccountUnavailable(pathEnv: string | undefined): Promise<string | undefined> {
  if (!(await findProgram('setpriv', pathEnv)))
    return 'running as root, and setpriv(1) (util-linux) is missing to run PostgreSQL as an unprivileged account';
  return undefined;
}

/** uid and gid of `name`, or undefined when there is no such account. */
async function lookUp(name: string): Promise<{ uid: number; gid: number } | undefined> {
  const { execa } = await import('execa');
  const [uid, gid] = await Promise.all([
    execa('id', ['-u', name], { reject: false }),
    execa('id', ['-g', name], { reject: false }),
  ]);
  if (uid.exitCode !== 0 || gid.exitCode !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * The account for the server, created when missing (`baton-postgres`, a system account with no
 * home and no login shell); `nobody` when it cannot be created (no useradd(8), a read-only /etc).
 * `pathEnv`: the environment's `PATH`, searched for setpriv(1) and useradd(8) before the system
 * directories.
 *
 * @throws BatonError `database_unavailable` when neither exists or setpriv(1) is missing.
 */
export async function ensureServerAccount(pathEnv: string | undefined): Promise<ServerAccount> {
  const setpriv = await findProgram('setpriv', pathEnv);
  if (!setpriv)
    throw new BatonError(
      'database_unavailable',
      'baton runs as root and setpriv(1) is missing, so PostgreSQL cannot run as an unprivileged account: install util-linux, run baton as a normal user, or set DATABASE_URL.',
    );
  let ids = await lookUp(SERVER_ACCOUNT_NAME);
  if (!ids) {
    const useradd = await findProgram('useradd', pathEnv);
    if (useradd) {
      const { execa } = await import('execa');
      // A second baton process may create it at the same moment: useradd then fails, the look-up finds it.
      await execa(
        useradd,
        [
          '--system',
          '--user-group',
          '--no-create-home',
          '--home-dir',
          '/nonexistent',
          '--shell',
          '/usr/sbin/nologin',
          '--comment',
          'baton embedded PostgreSQL',
          SERVER_ACCOUNT_NAME,
        ],
        {
          reject: false,
          stdin: 'ignore',
        },
      );
      ids = await lookUp(SERVER_ACCOUNT_NAME);
    }
  }
  if (ids) return { name: SERVER_ACCOUNT_NAME, ...ids, setpriv };
  const nobody = await lookUp('nobody');
  if (nobody) return { name: 'nobody', ...nobody, setpriv };
  throw new BatonError(
    'database_unavailable',
    `baton runs as root and could neither create the account ${SERVER_ACCOUNT_NAME} nor find nobody for PostgreSQL: create one (useradd --system ${SERVER_ACCOUNT_NAME}), run baton as a normal user, or set DATABASE_URL.`,
  );
}

/** The command line that runs `file args` as `account` (unchanged without one). */
export function asAccount(
  account: ServerAccount | undefined,
  file: string,
  args: readonly string[],
): [string, string[]] {
  if (!account) return [file, [...args]];
  return [
    account.setpriv,
    [
      `--reuid=${account.uid}`,
      `--regid=${account.gid}`,
      '--clear-groups',
      '--inh-caps=+dac_read_search',
      '--ambient-caps=+dac_read_search',
      '--',
      file,
      ...args,
    ],
  ];
}

/** Gives `paths` (recursively for directories) to `account`; nothing without one. */
export async function giveTo(account: ServerAccount | undefined, ...paths: string[]): Promise<void> {
  if (!account) return;
  const { execa } = await import('execa');
  for (const path of paths) await execa('chown', ['-R', `${account.uid}:${account.gid}`, path], { stdin: 'ignore' });
}

/** Gives one file (not recursing) to `account`; nothing without one. */
export async function giveFileTo(account: ServerAccount | undefined, path: string): Promise<void> {
  if (account) await chown(path, account.uid, account.gid);
}
