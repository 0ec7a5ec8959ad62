/**
 * Attack: two records of one delivery in one group-commit batch. The batch statement updates
 * `deliveries ... from input where d.id = i.id`; with two input rows for one delivery PostgreSQL
 * updates the row once, from one of them, and drops the other silently: its message ids never
 * reach platform_message_ids (and parts_delivered may go back). It can happen: rows without a run
 * are not serialized per run in the outbox, so an inline attempt that outlives its lease and the
 * retry worker's claim of the same row record their parts concurrently, in one process.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const now = new Date('2026-12-01T08:00:00.000Z');

describe(`recordPartsSent: two records of one delivery in one batch on ${testEngine}`, () => {
  const database = useTestDatabase();
  let store: RunStore;

  beforeAll(async () => {
    store = new RunStore(database.db);
  });

  it('applies both, as two statements in turn would', async () => {
    const [first, row] = await database.db
      .insert(schema.deliveries)
      .values(
        [0, 1].map((i) => ({
          runId: null,
          kind: 'reply' as const,
          target: { platform: 'telegram', chatId: '7' },
          body: `b${i}`,
          nextAttemptAt: now,
          createdAt: now,
        })),
      )
      .returning();
    // The first record goes alone at once; the two of `row` queue behind it and go together.
    await Promise.all([
      store.outbox.recordPartsSent(first!, 1, ['f1'], true, now),
      store.outbox.recordPartsSent(row!, 1, ['a1'], false, now),
      store.outbox.recordPartsSent(row!, 2, ['a2'], true, now),
    ]);
    expect(await store.outbox.getDelivery(row!.id)).toMatchObject({
      partsDelivered: 2,
      platformMessageIds: ['a1', 'a2'],
      status: 'delivered',
    });
  });
});
