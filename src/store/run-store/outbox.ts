/**
 * The outbox: `deliveries` rows, their claims, sent parts and failed attempts.
 */
import { and, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { RunId } from '../../core/ids.js';
import type { Db } from '../database.js';
import { GroupCommit } from '../group-commit.js';
import {
  ACTIVE_RUN_STATUSES,
  deliveries,
  runs,
  type DeliveryRow,
  type DocumentJson,
  type ReshapeJson,
} from '../schema.js';
import { isStatementError, partsSentStatement, type PartsSent } from './parts-sent.js';
import { NO_EARLIER_PENDING } from './sql-filters.js';
import { INLINE_LEASE_MS, storableText, toDeliveryValues } from './transaction.js';
import type { NewDelivery } from './types.js';

/** The outbox: `deliveries` rows, their claims, sent parts and failed attempts. */
export class OutboxRepo {
  constructor(private readonly db: Db) {}

  /** Writes a message that no run state change caused (command answers, refusals). */
  async enqueue(delivery: NewDelivery, now: Date): Promise<DeliveryRow> {
    const [row] = await this.db.insert(deliveries).values(toDeliveryValues(delivery, now)).returning();
    return row!;
  }

  /**
   * Claims up to `limit` due pending deliveries for sending: rows locked by another process are
   * skipped (`FOR UPDATE SKIP LOCKED`), a row of a run waits while an earlier row of the same run
   * is pending (other runs are not held up), and each claimed row's next attempt moves `leaseMs`
   * ahead, so no other process picks it up while this one sends it. The rows come back with that
   * new `nextAttemptAt`, which {@link claimInRunOrder} checks.
   */
  async claimDueDeliveries(now: Date, limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    return this.db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(deliveries)
        // The status is a literal, not a bound parameter: a cached generic plan can then prove the
        // partial index's predicate (deliveries_due … where status = 'pending') and use it.
        .where(and(sql`${deliveries.status} = 'pending'`, lte(deliveries.nextAttemptAt, now), NO_EARLIER_PENDING))
        .orderBy(deliveries.nextAttemptAt)
        .limit(limit)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      const leaseUntil = new Date(now.getTime() + leaseMs);
      await tx
        .update(deliveries)
        .set({ nextAttemptAt: leaseUntil })
        .where(
          inArray(
            deliveries.id,
            due.map((d) => d.id),
          ),
        );
      return due.map((d) => ({ ...d, nextAttemptAt: leaseUntil }));
    });
  }

  /**
   * Takes a run's delivery for sending now, in run order: succeeds only while the row is still
   * pending, no earlier row of its run is pending, and its `nextAttemptAt` is still the one the
   * caller saw (so of two processes racing for it, one wins). Moves its next attempt `leaseMs`
   * ahead.
   *
   * @returns the current row, or undefined when it is not (or no longer) this caller's to send.
   */
  async claimInRunOrder(row: DeliveryRow, now: Date, leaseMs: number): Promise<DeliveryRow | undefined> {
    const [claimed] = await this.db
      .update(deliveries)
      .set({ nextAttemptAt: new Date(now.getTime() + leaseMs) })
      .where(
        and(
          eq(deliveries.id, row.id),
          eq(deliveries.status, 'pending'),
          eq(deliveries.nextAttemptAt, row.nextAttemptAt),
          NO_EARLIER_PENDING,
        ),
      )
      .returning();
    return claimed;
  }

  /** The oldest pending delivery of a run, or undefined. */
  async firstPendingOfRun(runId: string): Promise<DeliveryRow | undefined> {
    return this.firstOfRun(runId, eq(deliveries.status, 'pending'));
  }

  /**
   * The `started` delivery of a run (the message its live status edits), or undefined. Its
   * `platformMessageIds` hold the platform ids of the parts sent so far, recorded as each part is
   * delivered; empty while the message has not been delivered.
   */
  async startedDelivery(runId: string): Promise<DeliveryRow | undefined> {
    return this.firstOfRun(runId, eq(deliveries.kind, 'started'));
  }

  /** The oldest delivery of run `runId` that matches `where`. */
  private async firstOfRun(runId: string, where: SQL): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.runId, runId), where))
      .orderBy(deliveries.id)
      .limit(1);
    return row;
  }

  /**
   * Puts a dead letter back in the queue, due now, with its attempts reset
   * (`/redeliver ID`). Parts already sent stay sent.
   *
   * @returns the row, or undefined when `id` is not a dead letter (never dead, or redelivered already).
   */
  async redeliver(id: number, now: Date): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .update(deliveries)
      .set({
        status: 'pending',
        attempts: 0,
        lastError: null,
        nextAttemptAt: new Date(now.getTime() + INLINE_LEASE_MS),
      })
      .where(and(eq(deliveries.id, id), eq(deliveries.status, 'dead')))
      .returning();
    return row;
  }

  /** One delivery by id. */
  async getDelivery(id: number): Promise<DeliveryRow | undefined> {
    const [row] = await this.db.select().from(deliveries).where(eq(deliveries.id, id)).limit(1);
    return row;
  }

  /** All deliveries of a run in the order they were written. */
  async deliveriesOfRun(runId: RunId): Promise<DeliveryRow[]> {
    return this.db.select().from(deliveries).where(eq(deliveries.runId, runId)).orderBy(deliveries.id);
  }

  /**
   * Records that parts of a delivery reached the platform: `partsDelivered` is the new total and
   * `messageIds` the platform ids of the parts just sent. Also maps those ids to the run.
   *
   * @returns `laterPendingInRun`: when `done`, whether a later delivery of the same run is still
   *   pending (false when not done or not a run's delivery).
   */
  async recordPartsSent(
    delivery: DeliveryRow,
    partsDelivered: number,
    messageIds: string[],
    done: boolean,
    now: Date,
  ): Promise<{ laterPendingInRun: boolean }> {
    const laterPendingInRun = await this.partsSent.submit({
      id: delivery.id,
      parts: partsDelivered,
      ids: messageIds,
      done,
      at: now.toISOString(),
      run_id: delivery.runId,
      platform: delivery.target.platform,
      chat_id: delivery.target.chatId,
    });
    return { laterPendingInRun };
  }

  /**
   * The writes of {@link recordPartsSent}, several rows to a statement while the service is busy
   * (group commit).
   */
  private readonly partsSent = new GroupCommit<PartsSent, boolean>((batch) => this.writePartsSent(batch), {
    maxBatch: 64,
    retryAlone: isStatementError,
  });

  /**
   * One statement, one round trip for any number of rows (the send loop was four per
   * part — begin, update, insert, commit — and a select for the run's next row): the row updates
   * and the message links are data-modifying CTEs, atomic like the transaction they replace, and
   * the final select says per row whether a later row of its run waits, which is all the outbox
   * needs to go on. The final select sees the table as it was before the statement; a batch never
   * holds two rows of one run (the outbox attempts a run's rows one at a time, and a claim leases
   * only a run's first pending row).
   *
   * @returns `later_pending` per row of `batch`, in order.
   */
  private async writePartsSent(batch: readonly PartsSent[]): Promise<boolean[]> {
    if (new Set(batch.map((b) => b.id)).size === batch.length) return partsSentStatement(this.db, batch);
    // Two records of one delivery (an attempt that outlived its lease and the retry worker's
    // attempt of the same row; rows without a run are not serialized per run): one update can
    // apply only one input row per delivery and drops the other silently. They go in turn, in
    // chunks without a repeated delivery, in one transaction (the batch stays all or nothing).
    return this.db.transaction(async (tx) => {
      const results: boolean[] = [];
      let chunk: PartsSent[] = [];
      for (const item of batch) {
        if (chunk.some((c) => c.id === item.id)) {
          results.push(...(await partsSentStatement(tx, chunk)));
          chunk = [];
        }
        chunk.push(item);
      }
      results.push(...(await partsSentStatement(tx, chunk)));
      return results;
    });
  }

  /** Stores the re-splits of a delivery (see `deliveries.reshapes`). */
  async recordReshapes(id: number, reshapes: readonly ReshapeJson[]): Promise<void> {
    await this.db
      .update(deliveries)
      .set({ reshapes: [...reshapes] })
      .where(eq(deliveries.id, id));
  }

  /** Records the delivery's files, e.g. one the platform refused for good (`refused: true`). */
  async recordDocuments(id: number, documents: readonly DocumentJson[]): Promise<void> {
    await this.db
      .update(deliveries)
      .set({ documents: [...documents] })
      .where(eq(deliveries.id, id));
  }

  /** Records a failed attempt; the row stays `pending` until `nextAttemptAt`, or goes `dead`. */
  async recordAttemptFailed(id: number, error: string, nextAttemptAt: Date, dead: boolean): Promise<void> {
    await this.db
      .update(deliveries)
      .set({
        attempts: sql`${deliveries.attempts} + 1`,
        lastError: storableText(error.slice(0, 2000)),
        nextAttemptAt,
        ...(dead ? { status: 'dead' as const } : {}),
      })
      .where(eq(deliveries.id, id));
  }

  /** Dead-lettered deliveries, newest first. */
  async deadLetters(limit: number): Promise<DeliveryRow[]> {
    return this.db
      .select()
      .from(deliveries)
      .where(eq(deliveries.status, 'dead'))
      .orderBy(desc(deliveries.createdAt))
      .limit(limit);
  }

  /** Counts for doctor and `/runs`: active runs, pending deliveries, dead letters. */
  async counts(): Promise<{ active: number; pendingDeliveries: number; deadLetters: number }> {
    const [active] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(runs)
      .where(inArray(runs.status, [...ACTIVE_RUN_STATUSES]));
    const byStatus = await this.db
      .select({ status: deliveries.status, n: sql<number>`count(*)::int` })
      .from(deliveries)
      .where(inArray(deliveries.status, ['pending', 'dead']))
      .groupBy(deliveries.status);
    const of = (status: string): number => byStatus.find((r) => r.status === status)?.n ?? 0;
    return { active: active?.n ?? 0, pendingDeliveries: of('pending'), deadLetters: of('dead') };
  }
}
