/**
 * A fresh, migrated database per test file: a new PostgreSQL database on the server named by
 * `DATABASE_URL` (CI sets it), else in-memory PGlite. The same suites run on both engines.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase, type Database } from '../../src/store/database.js';

/** A database for one test file; `dispose()` closes it and drops the PostgreSQL database. */
export interface TestDatabase extends Database {
  /** The URL of the fresh PostgreSQL database, or undefined on PGlite. */
  url: string | undefined;
  dispose(): Promise<void>;
}

/** Which engine the suite runs on, for test names. */
export const testEngine: 'postgres' | 'pglite' = process.env.DATABASE_URL ? 'postgres' : 'pglite';

/** Creates an empty database named `baton_t_<hex>` and returns its URL. */
export async function createPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `baton_t_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const again = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/**
 * Opens a fresh migrated database on the suite's engine. `rewriteUrl` changes the URL the
 * database is opened through (e.g. a TCP proxy); the database is created and dropped directly.
 */
export async function openTestDatabase(rewriteUrl: (url: string) => string = (url) => url): Promise<TestDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const database = await openDatabase({ memory: true });
    return { ...database, url: undefined, dispose: () => database.close() };
  }
  const created = await createPostgresDatabase(adminUrl);
  const database = await openDatabase({ url: rewriteUrl(created.url), maxConnections: 4 });
  return {
    ...database,
    url: created.url,
    dispose: async () => {
      await database.close();
      await created.drop();
    },
  };
}
