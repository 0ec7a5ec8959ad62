/**
 * The console's reads of the fleet on a real database (PostgreSQL, or PGlite without
 * DATABASE_URL): filters, counts, and the change stamp the live feed polls where LISTEN is absent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStamp, fleetCounts, listRuns } from '../../src/store/console-reads.js';
import { deliveries, runs } from '../../src/store/schema.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { runRow } from '../support/rows.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database?.dispose());

describe('console reads', () => {
  it('filters by status, vendor, node and conversation; counts statuses and the outbox; the stamp moves', async () => {
    const { db } = database;
    const before = await changeStamp(db);
    const a = runRow({ cwd: '/r/a', status: 'completed', node: 'alpha', createdAt: new Date(Date.now() - 2000) });
    const b = runRow({
      cwd: '/r/b',
      vendor: 'claude',
      status: 'failed',
      node: 'beta',
      origin: { platform: 'slack', chatId: 'C1', senderId: 'U1', messageId: '1' },
    });
    await db.insert(runs).values([a, b]);
    await db.insert(deliveries).values({
      runId: b.id,
      kind: 'outcome',
      target: { platform: 'slack', chatId: 'C1' },
      body: 'x',
      status: 'dead',
      nextAttemptAt: new Date(),
      createdAt: new Date(),
    });
    expect(await changeStamp(db)).not.toBe(before);
    expect((await listRuns(db, {}, 10, 0)).rows.map((r) => r.id)).toEqual([b.id, a.id]);
    expect((await listRuns(db, { status: 'completed' }, 10, 0)).rows.map((r) => r.id)).toEqual([a.id]);
    expect((await listRuns(db, { vendor: 'claude' }, 10, 0)).rows.map((r) => r.id)).toEqual([b.id]);
    expect((await listRuns(db, { node: 'alpha' }, 10, 0)).rows.map((r) => r.id)).toEqual([a.id]);
    expect((await listRuns(db, { conversation: 'slack:C1' }, 10, 0)).rows.map((r) => r.id)).toEqual([b.id]);
    // An unknown status from the query string matches nothing instead of failing the enum cast.
    expect(await listRuns(db, { status: "x' or 1=1 --" }, 10, 0)).toEqual({ rows: [], total: 0 });
    expect(await fleetCounts(db)).toEqual({
      byStatus: { completed: 1, failed: 1 },
      pendingDeliveries: 0,
      deadLetters: 1,
    });
  });
});
