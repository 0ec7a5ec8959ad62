/**
 * Attack on prepared statements (src/store/database.ts): statements are per connection, so after
 * the connection is cut (mid-query, or between queries), after `recycle()`, and after a transaction
 * that failed, the same queries must run again (re-prepared on the new connection), in and out of
 * transactions, and the worker's claim query too. PostgreSQL server only.
 */
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.js';
import { INLINE_LEASE_MS, RunStore } from '../../src/store/runs-repo.js';
import { runs } from '../../src/store/schema.js';
import { testEngine } from '../support/database.js';
import { startProxiedPostgres, type ProxiedPostgres } from '../support/proxied-postgres.js';

describe.skipIf(testEngine !== 'postgres')('prepared statements across reconnects', () => {
  let pg: ProxiedPostgres;
  beforeAll(async () => {
    pg = await startProxiedPostgres();
  }, 60_000);
  afterAll(async () => pg?.dispose());

  const lookup = (database: Database, id: string) =>
    database.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.id, id), eq(runs.status, 'running')));
  const inTx = (database: Database, id: string) =>
    database.db.transaction(async (tx) =>
      tx
        .select({ id: runs.id })
        .from(runs)
        .where(and(eq(runs.id, id), eq(runs.status, 'running'))),
    );
  /** Runs `f` until it succeeds (a cut may fail the first try), at most 5 times. */
  const settle = async <T>(f: () => Promise<T>): Promise<T> => {
    for (let i = 0; ; i++) {
      try {
        return await f();
      } catch (err) {
        if (i >= 4) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };

  it('after a cut, recycle() and a failed transaction the same statements run again', async () => {
    const database = await pg.open();
    const proxy = pg.proxy;
    const store = new RunStore(database.db);
    const now = new Date('2026-12-01T00:00:00Z');
    const claimAt = new Date(now.getTime() + INLINE_LEASE_MS + 1);
    for (let round = 0; round < 2; round++) {
      await lookup(database, 'a');
      await inTx(database, 'a');
      await store.outbox.claimDueDeliveries(claimAt, 5, 1000);
    }
    // Cut between queries.
    proxy.cut();
    await settle(() => lookup(database, 'b'));
    expect(await inTx(database, 'b')).toEqual([]);
    await store.outbox.claimDueDeliveries(claimAt, 5, 1000);
    // Cut in the middle of a transaction's query.
    const failing = database.db
      .transaction(async (tx) => {
        await tx
          .select({ id: runs.id })
          .from(runs)
          .where(and(eq(runs.id, 'a'), eq(runs.status, 'running')));
        await tx.execute(sql`select pg_sleep(${1})`);
      })
      .catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 200));
    proxy.cut();
    expect(await failing).toBeInstanceOf(Error);
    await settle(() => store.outbox.claimDueDeliveries(claimAt, 5, 1000));
    await store.outbox.enqueue(
      { runId: null, kind: 'reply', target: { platform: 'telegram', chatId: '1' }, body: 'x' },
      now,
    );
    expect(await store.outbox.claimDueDeliveries(claimAt, 5, 1000)).toHaveLength(1);
    // A failed transaction (its body throws after a prepared query), then the same queries.
    await expect(
      database.db.transaction(async (tx) => {
        await tx
          .select({ id: runs.id })
          .from(runs)
          .where(and(eq(runs.id, 'c'), eq(runs.status, 'running')));
        await tx.execute(sql`select 1/0`);
      }),
    ).rejects.toThrow();
    expect(await inTx(database, 'c')).toEqual([]);
    // A query that fails at parse inside a transaction, then the same transaction's good query.
    await expect(
      database.db.transaction(async (tx) => tx.execute(sql`select nope from runs where id = ${'x'}`)),
    ).rejects.toThrow();
    expect(await inTx(database, 'd')).toEqual([]);
    // recycle(): a fresh pool, statements prepared again.
    await database.recycle();
    expect(await lookup(database, 'e')).toEqual([]);
    expect(await inTx(database, 'e')).toEqual([]);
    expect(await store.outbox.claimDueDeliveries(new Date(claimAt.getTime() + 2000), 5, 1000)).toHaveLength(1);
  });
});
