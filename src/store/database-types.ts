/** The shapes of an open database that the store's modules share. */
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { WatchLogger } from './embedded-postgres-watch.js';
import type * as schema from './schema.js';

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

/** A {@link Database} as its opener returns it, with the migrator's hook. */
export interface OpenedDatabase extends Database {
  migrate(run: () => Promise<void>): Promise<void>;
}
