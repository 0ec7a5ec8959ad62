/** The schema migrations: applying those under `migrations/`, and checking they are applied. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Database, OpenedDatabase } from './database-types.js';

/** The migrations folder shipped with the package (`migrations/` beside `src/` and `dist/`). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));
/** Advisory lock key that serializes migrations across processes. */
export const MIGRATION_LOCK_KEY = 715041;

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

/** Applies the migrations the database does not hold yet (none on a warm start). */
export async function migrate(database: OpenedDatabase): Promise<void> {
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
