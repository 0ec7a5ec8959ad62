/**
 * Opening a database whose migrations are all applied (a warm start) checks that with one query
 * and takes no migration lock (issue #15: start-up time). A database behind the journal is
 * migrated under the lock, as every test's fresh database is.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsCurrent, openDatabase } from '../../src/store/database.js';
import { createPostgresDatabase } from '../support/database.js';

/** Must match MIGRATION_LOCK_KEY in src/store/database.ts. */
const MIGRATION_LOCK_KEY = 715041;
const adminUrl = process.env.DATABASE_URL;

describe.skipIf(!adminUrl)('migrations on open (PostgreSQL)', () => {
  let created: { url: string; drop(): Promise<void> };
  let holder: postgres.Sql;
  beforeAll(async () => {
    created = await createPostgresDatabase(adminUrl!);
    holder = postgres(created.url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await holder.end();
    await created.drop();
  });

  it('opens an up-to-date database while another process holds the migration lock', async () => {
    const first = await openDatabase({ url: created.url, maxConnections: 2 });
    expect(await migrationsCurrent(first)).toBe(true);
    await first.close();
    // Another process is (say) migrating: the lock stays held until this open has returned.
    // Before the check, the open queued behind the lock and this test never finished.
    await holder`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    try {
      const warm = await openDatabase({ url: created.url, maxConnections: 2 });
      expect(await migrationsCurrent(warm)).toBe(true);
      await warm.close();
    } finally {
      await holder`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    }
  }, 60_000);
});
