/**
 * Attack on prepared statements (src/store/database.ts `preparedStatements`): a schema change made
 * by another connection (a migration run by another service process on the shared database, e.g.
 * a column widened int → bigint) changes the result type of a statement this process prepared
 * earlier. postgres.js retries such a statement once outside a transaction, but inside one the
 * retry runs in the aborted transaction, so the query fails with "cached plan must not change
 * result type": claimDueDeliveries (a transaction) failed on every pooled connection once, where
 * unnamed statements (before the change, or with ?prepare=false) just worked.
 *
 * PostgreSQL server only.
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/database.js';
import { INLINE_LEASE_MS, RunStore } from '../../src/store/runs-repo.js';
import { createPostgresDatabase, testEngine } from '../support/database.js';

describe.skipIf(testEngine !== 'postgres')('prepared statements and a schema change by another connection', () => {
  let created: { url: string; drop(): Promise<void> };
  const opened: Database[] = [];
  beforeAll(async () => {
    created = await createPostgresDatabase(process.env.DATABASE_URL!);
    opened.push(await openDatabase({ url: created.url, maxConnections: 2 }));
    opened.push(await openDatabase({ url: created.url, maxConnections: 1, migrate: false }));
  }, 60_000);
  afterAll(async () => {
    for (const database of opened) await database.close();
    await created?.drop();
  });

  it('a transaction whose prepared statement changed result type still runs', async () => {
    const database = opened[1]!;
    const store = new RunStore(database.db);
    const now = new Date('2026-12-01T00:00:00Z');
    await store.outbox.enqueue(
      { runId: null, kind: 'reply', target: { platform: 'telegram', chatId: '1' }, body: 'a' },
      now,
    );
    expect(
      await store.outbox.claimDueDeliveries(new Date(now.getTime() + INLINE_LEASE_MS + 1), 10, 60_000),
    ).toHaveLength(1);
    // Another process migrates: a column of deliveries is widened.
    const other = postgres(created.url, { max: 1, onnotice: () => {} });
    try {
      await other.unsafe('alter table deliveries alter column attempts type bigint');
    } finally {
      await other.end();
    }
    await store.outbox.enqueue(
      { runId: null, kind: 'reply', target: { platform: 'telegram', chatId: '1' }, body: 'b' },
      now,
    );
    const claimed = await store.outbox.claimDueDeliveries(new Date(now.getTime() + INLINE_LEASE_MS + 1), 10, 60_000);
    expect(claimed.length).toBeGreaterThan(0);
    // and a plain transaction with a select too
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
    });
  });
});
