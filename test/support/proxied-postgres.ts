/**
 * A fresh migrated PostgreSQL database with a TCP proxy (test/fakes/tcp-proxy.ts) in front of its
 * server, for tests that count or cut what goes over the wire. PostgreSQL server only: needs
 * `DATABASE_URL`.
 */
import { openDatabase, type Database } from '../../src/store/database.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { createPostgresDatabase } from './database.js';

/** The database, its proxy, and opens through the proxy; `dispose()` closes all and drops it. */
export interface ProxiedPostgres {
  proxy: TcpProxy;
  /**
   * Opens the (already migrated) database through the proxy with a pool of `maxConnections`
   * (default 1); `params` are added to the URL's query (e.g. `{ prepare: 'false' }`).
   */
  open(options?: { maxConnections?: number; params?: Record<string, string> }): Promise<Database>;
  dispose(): Promise<void>;
}

/** Creates the database (migrated over a direct connection) and starts the proxy. */
export async function startProxiedPostgres(): Promise<ProxiedPostgres> {
  const created = await createPostgresDatabase(process.env.DATABASE_URL!);
  const target = new URL(created.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  // Migrations take a lock on a connection of their own: two connections.
  const opened: Database[] = [await openDatabase({ url: created.url, maxConnections: 2 })];
  return {
    proxy,
    open: async ({ maxConnections = 1, params = {} } = {}) => {
      const url = new URL(proxy.rewrite(created.url));
      for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
      const database = await openDatabase({ url: url.toString(), maxConnections, migrate: false });
      opened.push(database);
      return database;
    },
    dispose: async () => {
      for (const database of opened) await database.close();
      await proxy.close();
      await created.drop();
    },
  };
}
