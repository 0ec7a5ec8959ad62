/**
 * Writes several repositories make inside their transactions: a delivery row, the end of a queued
 * or active run with its outcome, the inbound event a launch answers, and the queue count of a
 * conversation.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../database.js';
import { deliveries, inboundEvents, runs, type DeliveryRow, type OriginJson } from '../schema.js';
import { duplicateInbound } from './refusals.js';
import type { InboundKey, NewDelivery } from './types.js';

/** A transaction of {@link Db}, or the database itself: what the shared writes run on. */
export type Tx = Pick<Db, 'select' | 'insert' | 'update' | 'execute'>;

/**
 * A new row is attempted inline by the process that wrote it; its first retry time is one lease
 * ahead so the retry worker of another process never sends it at the same moment.
 */
export const INLINE_LEASE_MS = 60_000;

/**
 * Text the database can store: PostgreSQL `text` and `jsonb` refuse U+0000 ("invalid byte
 * sequence for encoding UTF8: 0x00"), so a NUL a CLI printed or an error carried becomes U+FFFD
 * instead of failing the write that ends a run. A NUL in what a person typed is refused earlier,
 * with an answer (dispatcher).
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** {@link storableText} of `text`, null when there is none. */
export function storableOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storableText(text);
}

/** The `deliveries` row of `delivery` written at `now`, due one inline lease later. */
export function toDeliveryValues(delivery: NewDelivery, now: Date): typeof deliveries.$inferInsert {
  return {
    runId: delivery.runId,
    kind: delivery.kind,
    target: delivery.target,
    body: storableText(delivery.body),
    ...(delivery.format ? { format: delivery.format } : {}),
    ...(delivery.documents?.length ? { documents: delivery.documents } : {}),
    ...(delivery.buttons?.length ? { buttons: delivery.buttons } : {}),
    nextAttemptAt: new Date(now.getTime() + INLINE_LEASE_MS),
    createdAt: now,
  };
}

/**
 * Ends the run `id` matched by `where` with `set`, and writes its outcome message, on `tx` (a
 * transaction the caller opened).
 *
 * @returns the outcome delivery, or null when no run matched (nothing is written).
 */
export async function endRunWithOutcome(
  tx: Tx,
  where: SQL | undefined,
  set: Partial<typeof runs.$inferInsert>,
  outcome: NewDelivery,
  now: Date,
): Promise<DeliveryRow | null> {
  const ended = await tx.update(runs).set(set).where(where).returning({ id: runs.id });
  if (ended.length === 0) return null;
  const [row] = await tx.insert(deliveries).values(toDeliveryValues(outcome, now)).returning();
  return row!;
}

/** How many runs wait `queued` in the conversation of `origin` (its platform and chat). */
export async function queuedInConversation(tx: Pick<Db, 'select'>, origin: OriginJson): Promise<number> {
  const [mine] = await tx
    .select({ count: sql<number>`count(*)::int` })
    .from(runs)
    .where(
      and(
        eq(runs.status, 'queued'),
        sql`${runs.origin}->>'platform' = ${origin.platform}`,
        sql`${runs.origin}->>'chatId' = ${origin.chatId}`,
      ),
    );
  return mine?.count ?? 0;
}

/** True when `err` (or its cause, as drizzle wraps driver errors) is a unique violation of `constraint`. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let current: unknown = err, depth = 0; current && depth < 4; depth++) {
    const candidate = current as { code?: unknown; constraint_name?: unknown; constraint?: unknown; cause?: unknown };
    if (
      candidate.code === '23505' &&
      (candidate.constraint_name === constraint || candidate.constraint === constraint)
    ) {
      return true;
    }
    current = candidate.cause;
  }
  return false;
}

/**
 * Marks the inbound event a launch answers as handled, inside the launch's transaction.
 *
 * @throws BatonError `duplicate_inbound` when it was already handled (a redelivery raced this one).
 */
export async function markInboundHandledIn(tx: Pick<Db, 'update'>, inbound: InboundKey): Promise<void> {
  const marked = await tx
    .update(inboundEvents)
    .set({ state: 'handled', payload: null })
    .where(
      and(
        eq(inboundEvents.platform, inbound.platform),
        eq(inboundEvents.dedupeKey, inbound.dedupeKey),
        sql`${inboundEvents.state} <> 'handled'`,
      ),
    )
    .returning({ key: inboundEvents.dedupeKey });
  if (marked.length === 0) throw duplicateInbound();
}
