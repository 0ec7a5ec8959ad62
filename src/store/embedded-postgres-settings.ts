/**
 * Where baton's embedded PostgreSQL server listens and how it is tuned: the names initdb makes,
 * and the settings file `baton.conf` written into the data directory at each start.
 *
 * Sources: PostgreSQL 18 documentation, "Server Configuration" (the keys in
 * {@link EMBEDDED_POSTGRES_SETTINGS}), "Connecting to the server" (socket file `.s.PGSQL.<port>`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { giveFileTo, type ServerAccount } from './embedded-postgres-account.js';

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

/** `postgresql.conf` includes `baton.conf` (idempotent). */
export async function ensureInclude(dataDir: string): Promise<void> {
  const confPath = join(dataDir, 'postgresql.conf');
  const conf = await readFile(confPath, 'utf8');
  if (!conf.includes("include_if_exists = 'baton.conf'"))
    await writeFile(
      confPath,
      `${conf}\n# baton's settings (src/store/embedded-postgres.ts)\ninclude_if_exists = 'baton.conf'\n`,
    );
}

/** Writes `baton.conf`: {@link EMBEDDED_POSTGRES_SETTINGS} and the socket directory (quotes doubled). */
export async function writeSettings(dataDir: string, account: ServerAccount | undefined): Promise<void> {
  await ensureInclude(dataDir);
  const lines = Object.entries(EMBEDDED_POSTGRES_SETTINGS).map(([key, value]) => `${key} = ${value}`);
  lines.push(`port = ${EMBEDDED_POSTGRES_PORT}`, `unix_socket_directories = '${dataDir.replaceAll("'", "''")}'`);
  const file = join(dataDir, 'baton.conf');
  await writeFile(file, `# Written by baton at each start; edits are overwritten.\n${lines.join('\n')}\n`, {
    mode: 0o600,
  });
  await giveFileTo(account, file); // written by root when baton runs as root; the server reads it
}
