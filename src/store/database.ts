/**
 * Opens the database: postgres.js when a `DATABASE_URL` is given; else, for a baton home, the
 * embedded engine {@link chooseEmbeddedEngine} picks (embedded PostgreSQL through a unix socket,
 * or PGlite in this process). All yield the same drizzle database type, so every query is
 * written once; this module is the only place that knows which engine runs.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { BatonError } from '../core/errors.js';
import { isProcessAlive, processToken } from '../core/process.js';
import { chooseEmbeddedEngine, startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.js';
import { watchEmbeddedPostgres, type WatchLogger } from './embedded-postgres-watch.js';
import { pgliteOptions, prepareDataDir } from './pglite-tuning.js';
import * as schema from './schema.js';

/** The drizzle database both drivers produce; repositories take this type. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Which engine a {@link Database} runs on, for banners and doctor. Never holds a password. */
export type DatabaseKind =
  | { engine: 'pglite'; dataDir: string }
  | { engine: 'postgres'; host: string }
  | { engine: 'embedded-postgres'; dataDir: string };

/** An open database. `close()` releases connections (and the PGlite directory lock). */
export interface Database {
  db: Db;
  kind: DatabaseKind;
  /** Why the embedded engine is not the default one (e.g. running as root), for one banner line. */
  note?: string;
  /** Releases connections; embedded PostgreSQL is stopped when no other process is connected. */
  close(): Promise<void>;
  /**
   * Replaces every pooled PostgreSQL connection with a fresh pool behind the same `db`; the old
   * pool ends once its queries settle (at most 5 s). For after a driver fault that can leave a
   * connection unable to send (src/store/driver-faults.ts). A no-op on PGlite.
   */
  recycle(): Promise<void>;
  /**
   * `LISTEN channel` on a connection of its own (postgres.js re-listens after a reconnect);
   * `onNotify` gets each payload. Absent on PGlite (one process: nobody else notifies). A pool
   * replaced by {@link recycle} loses the subscription: callers keep a polling fallback.
   *
   * @returns the function that ends the subscription.
   * @throws the database error when the subscription cannot be made.
   */
  listen?(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Embedded PostgreSQL only: from now until {@link close}, start the server again whenever it is
   * gone (src/store/embedded-postgres-watch.ts), logging each event to `logger`. For long-lived
   * processes (the service); a short command does without.
   */
  superviseServer?(logger: WatchLogger): void;
}

interface OpenedDatabase extends Database {
  migrate(run: () => Promise<void>): Promise<void>;
}

/**
 * Options for {@link openDatabase}; `migrate: false` opens without applying migrations (doctor).
 * `embedded`: the baton home (`$BATON_HOME`) whose embedded database to open, engine chosen by
 * {@link chooseEmbeddedEngine}; `dataDir`/`memory`: PGlite explicitly.
 */
export type OpenDatabaseOptions = (
  | { url: string; maxConnections?: number }
  | { embedded: string; maxConnections?: number }
  | { dataDir: string }
  | { memory: true }
) & { migrate?: boolean };

/** The migrations folder shipped with the package (`migrations/` beside `src/` and `dist/`). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Opens and migrates the database.
 *
 * @throws BatonError `database_unavailable` when the server can't be reached or the embedded
 *   data directory is in use by another live process; `migration_failed` when a migration fails.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  let database: OpenedDatabase;
  let note: string | undefined;
  if ('url' in options) database = await openPostgres({ url: options.url }, options.maxConnections);
  else if ('embedded' in options) {
    const choice = await chooseEmbeddedEngine(options.embedded);
    note = choice.engine === 'pglite' ? choice.why : undefined;
    database =
      choice.engine === 'pglite'
        ? await openPglite({ dataDir: choice.dataDir })
        : await openEmbeddedPostgres(
            choice.dataDir,
            join(options.embedded, 'logs', 'postgres.log'),
            options.maxConnections,
          );
  } else database = await openPglite(options);
  const opened = (): Database => ({
    db: database.db,
    kind: database.kind,
    close: database.close,
    recycle: database.recycle,
    ...(database.listen ? { listen: database.listen } : {}),
    ...(database.superviseServer ? { superviseServer: database.superviseServer } : {}),
    ...(note ? { note } : {}),
  });
  if (options.migrate === false) return opened();
  try {
    await migrate(database);
  } catch (err) {
    await database.close();
    throw new BatonError(
      'migration_failed',
      `Database migrations failed: ${err instanceof Error ? err.message : String(err)}. ` +
        'Check that the database user may create tables, then restart.',
      { cause: err },
    );
  }
  return opened();
}

/** Where postgres.js connects: a URL, or an embedded server's socket. */
type PostgresTarget = { url: string } | { server: EmbeddedServer };

/** application_name of this process's connections, so a closing process can tell other processes' apart. */
const APPLICATION_NAME = `baton-${process.pid}`;

async function openEmbeddedPostgres(
  dataDir: string,
  logFile: string,
  maxConnections?: number,
): Promise<OpenedDatabase> {
  const { default: postgres } = await import('postgres');
  const canConnect = async (server: EmbeddedServer): Promise<boolean> => {
    const probe = postgres({
      host: server.socketDir,
      port: server.port,
      user: server.user,
      database: server.database,
      max: 1,
      connect_timeout: 5,
      onnotice: () => {},
    });
    try {
      await probe`select 1`;
      return true;
    } catch {
      return false;
    } finally {
      await probe.end({ timeout: 1 });
    }
  };
  const server = await startEmbeddedPostgres(dataDir, logFile, canConnect);
  const database = await openPostgres({ server }, maxConnections);
  const closePool = database.close;
  let watch: { stop(): Promise<void> } | undefined;
  return {
    ...database,
    kind: { engine: 'embedded-postgres', dataDir },
    superviseServer: (logger) => {
      watch ??= watchEmbeddedPostgres({
        dataDir,
        logger,
        restart: async () => void (await startEmbeddedPostgres(dataDir, logFile, canConnect)),
      });
    },
    // The last process out stops the server; until then others keep using it.
    close: async () => {
      await watch?.stop(); // first: the stop below must not be taken for a crash
      let others = 1;
      try {
        const rows = await database.db.execute(
          sql`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and application_name <> ${APPLICATION_NAME}`,
        );
        others = (rows as unknown as { n: number }[])[0]?.n ?? 1;
      } catch {
        others = 1; // cannot tell: leave it running; the next opener uses it
      }
      await closePool();
      if (others === 0) await server.stop();
    },
  };
}

async function openPostgres(target: PostgresTarget, maxConnections = 10): Promise<OpenedDatabase> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const host = 'url' in target ? safeHost(target.url) : `${target.server.socketDir} (unix socket)`;
  const newPool = () => {
    // fetch_types off: no column or result of baton's is an array, and postgres.js 3.4.9 runs
    // that per-connection type query from a promise nobody awaits (connection.js
    // fetchArrayTypes), so a connection reset during it was an unhandled rejection (seen in a
    // loaded test run); it also saves a round trip on every new connection.
    const common = {
      max: maxConnections,
      onnotice: () => {},
      connect_timeout: 10,
      fetch_types: false,
      connection: { application_name: APPLICATION_NAME },
    };
    const pool =
      'url' in target
        ? postgres(target.url, common)
        : postgres({
            ...common,
            host: target.server.socketDir,
            port: target.server.port,
            user: target.server.user,
            database: target.server.database,
          });
    // drizzle sets its type parsers on the pool's options when it wraps one: a fresh pool gets
    // them the same way before it replaces the old one.
    drizzle(pool, { schema });
    return pool;
  };
  let client = newPool();
  // drizzle keeps the object it was given; this stand-in forwards to whichever pool is current,
  // so `recycle()` can swap pools under every repository holding `db`, and has its queries
  // prepared on the server (see preparedStatements).
  const current = preparedStatements(() => client);
  try {
    await client`select 1`;
  } catch (err) {
    await client.end({ timeout: 1 });
    throw new BatonError(
      'database_unavailable',
      `Cannot reach PostgreSQL at ${host}: ${err instanceof Error ? err.message : String(err)}. ` +
        'Start the server or fix DATABASE_URL; unset it to use the embedded database.',
      { cause: err, details: { host } },
    );
  }
  const db = drizzle(current, { schema }) as unknown as Db;
  return {
    db,
    kind: { engine: 'postgres', host },
    recycle: async () => {
      const old = client;
      client = newPool();
      await old.end({ timeout: 5 });
    },
    // Several service processes may start at once on one server: a session advisory lock on a
    // reserved connection serializes their migrations.
    migrate: async (run) => {
      const lockConnection = await client.reserve();
      try {
        await lockConnection`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        await run();
      } finally {
        await lockConnection`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => undefined);
        lockConnection.release();
      }
    },
    listen: async (channel, onNotify) => {
      const subscription = await client.listen(channel, onNotify);
      return () => subscription.unlisten();
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/**
 * A stand-in for a postgres.js client (the one `current()` returns at each call) whose `unsafe`
 * queries, the way drizzle sends every query, are prepared on the server: named statements that
 * postgres.js keeps per connection and reuses by their text.
 *
 * Why: drizzle 0.45 asks postgres.js not to prepare a query unless it was given a name
 * (`prepare: name !== undefined`, drizzle-orm/postgres-js/session.js), and postgres.js 3.4.9 sends
 * an unprepared query that has parameters in two turns: Parse + Describe, then, once the server
 * has described the parameter types, Bind + Execute; and nothing else goes out on that connection
 * in between, so queries meant to be pipelined waited for each other (src/connection.js `build`,
 * `describeFirst`). A prepared statement is described once per connection; after that each run of
 * it is one turn (Bind + Execute), and the server parses it no more. Measured in the delivery
 * bench: recordPartsSent 8.3 → 5.2 ms at p50.
 *
 * The pool option still rules: `?prepare=false` in `DATABASE_URL` (or `PGPREPARE=false`) turns
 * statements off, for a pooler in transaction mode that cannot keep them (PgBouncer before 1.21).
 * Transactions and savepoints get the same stand-in, so their queries are prepared too.
 */
function preparedStatements<T extends PostgresClient>(current: () => T): T {
  const prepared = (options: unknown): Record<string, unknown> => ({
    ...(options as Record<string, unknown> | undefined),
    prepare: true,
  });
  /** `fn` given a stand-in for the transaction client it is called with. */
  const wrapBody =
    (fn: (tx: PostgresClient) => unknown) =>
    (tx: PostgresClient): unknown =>
      fn(preparedStatements(() => tx));
  return new Proxy(current(), {
    get: (_target, key) => {
      const client = current();
      if (key === 'unsafe') {
        return (query: string, args?: unknown, options?: unknown) =>
          Array.isArray(args)
            ? client.unsafe(query, args as never, prepared(options) as never)
            : client.unsafe(query, prepared(args) as never);
      }
      if (key === 'begin' || key === 'savepoint') {
        // (fn) or (mode, fn): the body comes last.
        return async (...args: unknown[]) => {
          const body = args.pop() as (tx: PostgresClient) => unknown;
          const run = () => (client[key] as (...a: unknown[]) => Promise<unknown>)(...args, wrapBody(body));
          if (key === 'savepoint') return run();
          // A statement prepared before another connection changed the schema under it (a
          // migration by another process: "cached plan must not change result type") fails once
          // per connection. postgres.js retries it outside a transaction, but inside one its retry
          // meets the aborted transaction. The transaction was rolled back and postgres.js dropped
          // the stale statement: run it again (a few stale statements at most, one per try).
          for (let tries = 1; ; tries++) {
            try {
              return await run();
            } catch (err) {
              if (tries >= 4 || !staleStatement(err)) throw err;
            }
          }
        };
      }
      const value: unknown = Reflect.get(client, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(client) : value;
    },
    apply: (_target, thisArg, args) =>
      Reflect.apply(current() as unknown as (...a: unknown[]) => unknown, thisArg, args),
  }) as T;
}

/** Whether a failed query (or drizzle's wrapper of it) hit a prepared statement the schema outdated. */
function staleStatement(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const routine = (e as { routine?: unknown }).routine;
    if (routine === 'RevalidateCachedQuery' || routine === 'FetchPreparedStatement') return true;
  }
  return false;
}

/** What {@link preparedStatements} needs of a postgres.js client or transaction. */
interface PostgresClient {
  unsafe(query: string, args?: never, options?: never): unknown;
  begin?: unknown;
  savepoint?: unknown;
}

async function openPglite(options: { dataDir: string } | { memory: true }): Promise<OpenedDatabase> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  let release = async (): Promise<void> => {};
  let dataDir = 'memory://';
  if ('dataDir' in options) {
    dataDir = options.dataDir;
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    release = await lockDataDir(dataDir);
  }
  let client: InstanceType<typeof PGlite>;
  try {
    if (dataDir !== 'memory://') await prepareDataDir(dataDir);
    client = new PGlite(dataDir === 'memory://' ? undefined : dataDir, pgliteOptions());
    await client.waitReady;
  } catch (err) {
    await release();
    throw new BatonError(
      'database_unavailable',
      `Cannot open the embedded database in ${dataDir}: ${err instanceof Error ? err.message : String(err)}.`,
      { cause: err, details: { dataDir } },
    );
  }
  const db = drizzle(client, { schema }) as unknown as Db;
  return {
    db,
    kind: { engine: 'pglite', dataDir },
    migrate: (run) => run(),
    recycle: async () => {},
    close: async () => {
      await client.close();
      await release();
    },
  };
}

/**
 * PGlite is single-process: a second process opening the same directory corrupts it. A pid file
 * beside the data refuses a second opener while the first is alive and is taken over when stale.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, '..', `${dataDir.split('/').pop() ?? 'pgdata'}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      // The pid alone is not proof: after a crash or reboot it may belong to another program.
      await handle.writeFile(JSON.stringify({ pid: process.pid, token: await processToken(process.pid) }));
      await handle.close();
      return async () => {
        await rm(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await lockHolder(lockPath);
      if (holder !== undefined) {
        throw new BatonError(
          'database_unavailable',
          `The embedded database in ${dataDir} is in use by another baton process (pid ${holder}). ` +
            'Stop it first, or set DATABASE_URL so several processes can share PostgreSQL.',
          { details: { dataDir, pid: holder } },
        );
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new BatonError('database_unavailable', `Could not lock the embedded database in ${dataDir}.`);
}

/**
 * The live baton process holding a PGlite lock file, or undefined when the lock is stale: its pid
 * is gone, is ours, or now names another process (its start token differs; for a lock written
 * before tokens existed, a process whose command line does not mention baton).
 */
async function lockHolder(lockPath: string): Promise<number | undefined> {
  const text = await readFile(lockPath, 'utf8').catch(() => '');
  let pid: number;
  let token: string | undefined;
  try {
    const parsed = JSON.parse(text) as { pid?: unknown; token?: unknown };
    pid = typeof parsed === 'number' ? parsed : Number(parsed.pid);
    token = typeof parsed === 'object' && typeof parsed.token === 'string' ? parsed.token : undefined;
  } catch {
    pid = Number.NaN;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isProcessAlive(pid)) return undefined;
  const current = await processToken(pid);
  if (token !== undefined && current !== undefined) return token === current ? pid : undefined;
  if (current === undefined) return pid; // no procfs: the live pid is all there is to go on
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return /baton/i.test(cmdline) ? pid : undefined;
}

/** Where a database is, for banners, doctor and errors: a data directory or a host, never a URL. */
export function databaseLocation(kind: DatabaseKind): string {
  return kind.engine === 'postgres' ? kind.host : kind.dataDir;
}

/** One phrase naming the engine and its location, e.g. `embedded PostgreSQL in ~/.baton/postgres`. */
export function describeDatabaseKind(kind: DatabaseKind): string {
  if (kind.engine === 'pglite') return `embedded PGlite in ${kind.dataDir}`;
  if (kind.engine === 'embedded-postgres') return `embedded PostgreSQL in ${kind.dataDir} (unix socket only)`;
  return `PostgreSQL at ${kind.host}`;
}

/** Host and database of a connection URL, without user or password, for banners and errors. */
export function safeHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

const MIGRATION_LOCK_KEY = 715041;

/**
 * Whether every migration under `migrations/` is applied (drizzle records them in
 * `drizzle.__drizzle_migrations`).
 */
export async function migrationsCurrent(database: Database): Promise<boolean> {
  const journal = JSON.parse(await readFile(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  try {
    const result = await database.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
    return (rows[0]?.n ?? 0) >= journal.entries.length;
  } catch {
    return false; // no migrations table yet: nothing applied
  }
}

/**
 * True when the database already holds the journal's last migration, by one query: drizzle's
 * migrator applies a migration when the newest applied row's `created_at` is older than the
 * migration's `when` (drizzle-orm `pg-core/dialect.js` `migrate`), so a newest row at or past the
 * journal's last `when` means it would apply nothing. A warm start then skips the migrator's
 * lock, schema and table checks, empty transaction and reading and hashing every SQL file.
 * False when the bookkeeping table does not exist yet.
 */
async function journalApplied(database: OpenedDatabase): Promise<boolean> {
  const journal = JSON.parse(await readFile(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  const lastWhen = Math.max(...journal.entries.map((entry) => entry.when));
  const result = await database.db
    .execute(sql`select max(created_at) as newest from drizzle.__drizzle_migrations`)
    .catch((err: unknown) => {
      // undefined_table / invalid_schema_name: a new database, nothing applied yet.
      if (pgErrorCode(err) === '42P01' || pgErrorCode(err) === '3F000') return [];
      throw err;
    });
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    newest: string | number | null;
  }[];
  const newest = rows[0]?.newest;
  return newest !== undefined && newest !== null && Number(newest) >= lastWhen;
}

/** The SQLSTATE of a driver error (postgres.js and PGlite both put it on `code`), if any. */
function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code ?? (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

async function migrate(database: OpenedDatabase): Promise<void> {
  if (await journalApplied(database)) return;
  const config = { migrationsFolder: MIGRATIONS_DIR };
  if (database.kind.engine === 'pglite') {
    const { migrate: run } = await import('drizzle-orm/pglite/migrator');
    await database.migrate(() => run(database.db as never, config));
    return;
  }
  const { migrate: run } = await import('drizzle-orm/postgres-js/migrator');
  await database.migrate(() => run(database.db as never, config));
}
