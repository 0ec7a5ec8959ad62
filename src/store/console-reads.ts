/**
 * What the local web console reads of the fleet: runs of every node (all share the database)
 * with filters and counts, the outbox's pending and dead rows, and open tool approvals. Read-only;
 * every change the console makes goes through the same code as the chat's.
 */
import { and, count, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from './database-types.js';
import { approvals, type ApprovalRow } from './schema/approvals.js';
import { deliveries, type DeliveryRow } from './schema/deliveries.js';
import { runs, type RunRow, type RunStatus } from './schema/runs.js';

/** The console's run filters; an absent field does not filter. Values are untrusted query text. */
export interface RunFilter {
  status?: string;
  vendor?: string;
  node?: string;
  /** `platform:chatId` of the conversation the run came from. */
  conversation?: string;
}

/** One page of runs, newest first, and how many match in all. */
export interface RunPage {
  rows: RunRow[];
  total: number;
}

/** Counts shown above the runs list: runs per status, pending deliveries, dead letters. */
export interface FleetCounts {
  byStatus: Partial<Record<RunStatus, number>>;
  pendingDeliveries: number;
  deadLetters: number;
}

/** The WHERE of {@link RunFilter}; values are bound as parameters, never spliced. */
function whereOf(filter: RunFilter): SQL | undefined {
  const parts: SQL[] = [];
  // Cast through text: an unknown status or vendor then matches nothing instead of failing the enum cast.
  if (filter.status) parts.push(sql`${runs.status}::text = ${filter.status}`);
  if (filter.vendor) parts.push(sql`${runs.vendor}::text = ${filter.vendor}`);
  if (filter.node) parts.push(eq(runs.node, filter.node));
  if (filter.conversation) {
    parts.push(sql`(${runs.origin}->>'platform') || ':' || (${runs.origin}->>'chatId') = ${filter.conversation}`);
  }
  return parts.length > 0 ? and(...parts) : undefined;
}

/** Runs matching `filter`, newest first, `limit` from `offset`. */
export async function listRuns(db: Db, filter: RunFilter, limit: number, offset: number): Promise<RunPage> {
  const where = whereOf(filter);
  const rows = await db.select().from(runs).where(where).orderBy(desc(runs.createdAt)).limit(limit).offset(offset);
  const [total] = await db.select({ n: count() }).from(runs).where(where);
  return { rows, total: total?.n ?? 0 };
}

/** One run by id, or undefined. */
export async function getRunRow(db: Db, runId: string): Promise<RunRow | undefined> {
  const [row] = await db.select().from(runs).where(eq(runs.id, runId)).limit(1);
  return row;
}

/** Runs per status and the outbox's pending and dead rows, fleet-wide. */
export async function fleetCounts(db: Db): Promise<FleetCounts> {
  const statuses = await db.select({ status: runs.status, n: count() }).from(runs).groupBy(runs.status);
  const outbox = await db.select({ status: deliveries.status, n: count() }).from(deliveries).groupBy(deliveries.status);
  const byStatus: Partial<Record<RunStatus, number>> = {};
  for (const row of statuses) byStatus[row.status] = row.n;
  return {
    byStatus,
    pendingDeliveries: outbox.find((r) => r.status === 'pending')?.n ?? 0,
    deadLetters: outbox.find((r) => r.status === 'dead')?.n ?? 0,
  };
}

/** Every distinct value of the filterable columns, for the filter form's choices (bounded). */
export async function filterChoices(db: Db): Promise<{ nodes: string[]; conversations: string[] }> {
  const nodes = await db.selectDistinct({ node: runs.node }).from(runs).where(sql`${runs.node} is not null`).limit(200);
  const conversations = await db
    .selectDistinct({ c: sql<string>`(${runs.origin}->>'platform') || ':' || (${runs.origin}->>'chatId')` })
    .from(runs)
    .limit(200);
  return {
    nodes: nodes.map((r) => r.node ?? '').filter(Boolean),
    conversations: conversations.map((r) => r.c).filter(Boolean),
  };
}

/** Tool approvals still waiting for an answer, oldest first, with their run's task. */
export async function openApprovals(db: Db): Promise<{ approval: ApprovalRow; task: string; vendor: string }[]> {
  const rows = await db
    .select({ approval: approvals, task: runs.task, vendor: runs.vendor })
    .from(approvals)
    .innerJoin(runs, eq(runs.id, approvals.runId))
    .where(and(isNull(approvals.decision), sql`${runs.status} in ('starting', 'running')`))
    .orderBy(approvals.id)
    .limit(500);
  return rows;
}

/**
 * A stamp that changes whenever a run starts, ends or is created, an approval opens or closes,
 * or a delivery is written or changes state: the live feed's fallback where LISTEN is absent.
 */
export async function changeStamp(db: Db): Promise<string> {
  const result = await db.execute(sql`select concat_ws(':',
    (select count(*) from runs where status in ('starting', 'running', 'queued')),
    (select max(greatest(created_at, coalesce(started_at, created_at), coalesce(ended_at, created_at))) from runs),
    (select count(*) from approvals where decision is null),
    (select count(*) from deliveries where status <> 'delivered'),
    (select count(*) from deliveries)) as stamp`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { stamp: string }[];
  return rows[0]?.stamp ?? '';
}

/** Every delivery of a run, in the order they were written. */
export function deliveriesOfRun(db: Db, runId: string): Promise<DeliveryRow[]> {
  return db.select().from(deliveries).where(eq(deliveries.runId, runId)).orderBy(deliveries.id);
}
