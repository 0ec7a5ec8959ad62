/**
 * Opens the database: postgres.js when a `DATABASE_URL` is given; else, for a baton home, the
 * embedded engine {@link chooseEmbeddedEngine} picks (embedded PostgreSQL through a unix socket,
 * or PGlite in this process). All yield the same drizzle database type, so every query is
 * written once; this module is the only place that knows which engine runs.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { BatonError } from '../core/errors.js';
import { chooseEmbeddedEngine, startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.js';
import { watchEmbeddedPostgres, type WatchLogger } from './embedded-postgres-watch.js';
import { pgliteOptions, prepareDataDir } from './pglite-tuning.js';
import * as schema from './schema.js';
import { lockDataDir } from './data-dir-lock.js';
import type { Database, DatabaseKind, Db, OpenedDatabase } from './database-types.js';
import { MIGRATION_LOCK_KEY, migrate } from './migrations.js';
import { preparedStatements } from './prepared-statements.js';

export type { Database, DatabaseKind, Db } from './database-types.js';
export { MIGRATIONS_DIR, migrationsCurrent } from './migrations.js';

/**
 * Options for {@link openDatabase}; `migrate: false` opens without applying migrations (doctor).
 * `embedded`: the baton home (`$BATON_HOME`) whose embedded database to open, engine chosen by
 * {@link chooseEmbeddedEngine}, with `pathEnv` the environment's `PATH` (where setpriv(1) and
 * useradd(8) are looked for first as root); `dataDir`/`memory`: PGlite explicitly.
 */
export type OpenDatabaseOptions = (
  | { url: string; maxConnections?: number }
  | { embedded: string; pathEnv: string | undefined; maxConnections?: number }
  | { dataDir: string }
  | { memory: true }
) & { migrate?: boolean };

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
    const choice = await chooseEmbeddedEngine(options.embedded, options.pathEnv);
    note = choice.engine === 'pglite' ? choice.why : undefined;
    database =
      choice.engine === 'pglite'
        ? await openPglite({ dataDir: choice.dataDir })
        : await openEmbeddedPostgres(
            choice.dataDir,
            join(options.embedded, 'logs', 'postgres.log'),
            options.pathEnv,
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
  pathEnv: string | undefined,
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
  const server = await startEmbeddedPostgres(dataDir, logFile, canConnect, pathEnv);
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
        restart: async () => void (await startEmbeddedPostgres(dataDir, logFile, canConnect, pathEnv)),
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
