/**
 * Attack: group commit widens what one statement locks. A batch updates several delivery rows;
 * a transaction that holds one of them and then wants another the batch already locked (e.g.
 * moveConversation, which updates every pending row of a chat) makes a deadlock that alone row
 * writes could not make, and PostgreSQL aborts the batch (40P01). Only class 22/23 was written
 * again row by row, so every row of the batch failed — rows that would have committed alone —
 * and the outbox takes a failed record for a failed send: the parts already on the platform are
 * sent again. A deadlock (or serialization failure) is raised by the server for the statement,
 * which then wrote nothing, so the rows can safely go again alone.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { insertCompletedRun } from '../support/rows.js';

const now = new Date('2026-12-01T08:00:00.000Z');

describe.skipIf(testEngine !== 'postgres')('recordPartsSent batch aborted as a deadlock victim', () => {
  const database = useTestDatabase();
  let other: postgres.Sql;

  beforeAll(async () => {
    other = postgres(database.url!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await other?.end({ timeout: 1 });
  });

  it('records each row of the batch anyway', async () => {
    const store = new RunStore(database.db);
    const rows = [];
    for (const chat of ['1', '2', '3']) {
      const runId = await insertCompletedRun(database.db, chat, now);
      const [row] = await database.db
        .insert(schema.deliveries)
        .values({
          runId,
          kind: 'outcome',
          target: { platform: 'telegram', chatId: chat },
          body: 'b',
          nextAttemptAt: now,
          createdAt: now,
        })
        .returning();
      rows.push(row!);
    }
    const [lone, a, b] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    const reserved = await other.reserve();
    await reserved`begin`;
    await reserved`update deliveries set attempts = attempts where id = ${b.id}`;
    // `lone` goes at once; a and b queue behind it and go together: the batch locks a, waits on b.
    const settled = Promise.allSettled([
      store.outbox.recordPartsSent(lone, 1, ['l1'], true, now),
      store.outbox.recordPartsSent(a, 1, ['a1'], true, now),
      store.outbox.recordPartsSent(b, 1, ['b1'], true, now),
    ]);
    await new Promise((r) => setTimeout(r, 300));
    // Now the other transaction wants a: a cycle. The batch, waiting longer, detects it and is aborted.
    const second = reserved`update deliveries set attempts = attempts where id = ${a.id}`.then(
      () => 'ok',
      (err: unknown) => String(err),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    await second;
    await reserved`commit`.catch(() => undefined);
    reserved.release();
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    for (const [row, id] of [
      [a, 'a1'],
      [b, 'b1'],
    ] as const) {
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered', platformMessageIds: [id] });
    }
  }, 20_000);
});
