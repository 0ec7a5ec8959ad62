/**
 * The one database fixture of the tests: a fresh, migrated database on the server named by
 * `DATABASE_URL` (CI sets it; a new database per fixture), else in-memory PGlite. The same suites
 * run on both engines. Isolation is by fresh database, never by truncating a shared one.
 *
 * A test file calls {@link useTestDatabase} (one database for the file, or one per test); a
 * helper that owns its database's lifetime calls {@link openTestDatabase} and disposes it.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
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

/** How long one {@link useTestDatabase} database lives. */
export interface TestDatabaseScope {
  /** `file`: one database for the enclosing file or describe block; `test`: a fresh one per test. @default 'file' */
  per?: 'file' | 'test';
  /** Changes the URL the database is opened through (e.g. a TCP proxy), as {@link openTestDatabase}. */
  rewriteUrl?: (url: string) => string;
}

/**
 * Opens a fresh migrated database in a `beforeAll` (or `beforeEach`) hook of the enclosing file
 * or describe block and disposes it in the matching after-hook, which runs after the after-hooks
 * registered later (so a harness on the database is disposed first).
 *
 * @returns a stand-in for the database: every property read goes to the database currently
 *   open, so `database.db` and `database.url` read as on a {@link TestDatabase}.
 * @throws Error from a property read while no database is open (outside the tests and hooks).
 */
export function useTestDatabase({ per = 'file', rewriteUrl }: TestDatabaseScope = {}): TestDatabase {
  let current: TestDatabase | undefined;
  (per === 'test' ? beforeEach : beforeAll)(async () => {
    current = await openTestDatabase(rewriteUrl);
  });
  (per === 'test' ? afterEach : afterAll)(async () => {
    const open = current;
    current = undefined;
    await open?.dispose();
  });
  const open = (): TestDatabase => {
    if (!current) throw new Error('the test database is open only inside the tests and hooks of its block');
    return current;
  };
  return new Proxy({} as TestDatabase, {
    get: (_, key) => Reflect.get(open(), key),
    has: (_, key) => Reflect.has(open(), key),
    ownKeys: () => Reflect.ownKeys(open()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(open(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
