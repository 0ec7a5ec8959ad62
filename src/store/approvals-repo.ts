/**
 * Tool approvals: one row per permission request, and its decision. A decision is
 * written once (`decision is null` guards every update), so two presses, or a press racing the
 * timeout, decide exactly once.
 */
import { and, asc, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { Db } from './database.js';
import { ACTIVE_RUN_STATUSES, approvals, runs, type ApprovalRow } from './schema.js';

/** A decision baton records (`approval_decision`). */
export type ApprovalDecision = NonNullable<ApprovalRow['decision']>;

/** What a permission request carries. */
export interface NewApproval {
  runId: string;
  /** The CLI's id of the tool call (claude `tool_use_id`). */
  requestId: string;
  tool: string;
  input: Record<string, unknown>;
  /** What "Allow for this run" matches (see `approvalScope`). */
  kind: string;
}

/**
 * The input as jsonb can hold it: jsonb refuses U+0000, which a model may put in a tool input
 * (anything claude forwards is untrusted), so it becomes U+FFFD in the stored copy; the row is
 * a record, claude runs the call with the input it has.
 */
function storableInput(input: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(input), (_key, value: unknown) =>
    typeof value === 'string' ? value.replaceAll('\u0000', '\ufffd') : value,
  ) as Record<string, unknown>;
}

/** The approvals repository: the only module that writes `approvals`. */
export class ApprovalStore {
  constructor(private readonly db: Db) {}

  /**
   * The row of a request, created when new; a request the CLI sends again (the permission server
   * retried after a service restart) finds its row and decision.
   */
  async open(request: NewApproval, now: Date): Promise<{ row: ApprovalRow; created: boolean }> {
    const [created] = await this.db
      .insert(approvals)
      .values({ ...request, input: storableInput(request.input), requestedAt: now })
      .onConflictDoNothing({ target: [approvals.runId, approvals.requestId] })
      .returning();
    if (created) return { row: created, created: true };
    const [existing] = await this.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.runId, request.runId), eq(approvals.requestId, request.requestId)))
      .limit(1);
    return { row: existing!, created: false };
  }

  /** One approval by id, or undefined. */
  async get(id: number): Promise<ApprovalRow | undefined> {
    const [row] = await this.db.select().from(approvals).where(eq(approvals.id, id)).limit(1);
    return row;
  }

  /** The run's "Allow for this run" decision whose kind is `kind`, if any. */
  async ruleFor(runId: string, kind: string): Promise<ApprovalRow | undefined> {
    const [row] = await this.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.runId, runId), eq(approvals.kind, kind), eq(approvals.decision, 'allow_run')))
      .limit(1);
    return row;
  }

  /**
   * Decides an open approval.
   *
   * @returns the decided row, or undefined when it was already decided (or does not exist).
   */
  async decide(id: number, decision: ApprovalDecision, decidedBy: string, now: Date): Promise<ApprovalRow | undefined> {
    const [row] = await this.db
      .update(approvals)
      .set({ decision, decidedBy, decidedAt: now })
      .where(and(eq(approvals.id, id), isNull(approvals.decision)))
      .returning();
    return row;
  }

  /** Every approval of a run, oldest first. */
  async ofRun(runId: string): Promise<ApprovalRow[]> {
    return this.db.select().from(approvals).where(eq(approvals.runId, runId)).orderBy(asc(approvals.id));
  }

  /**
   * Closes open approvals whose run is no longer active as `run_gone` (at start, and when a run
   * ends): nobody is waiting for them any more.
   *
   * @returns how many were closed.
   */
  async closeGone(now: Date, runId?: string): Promise<number> {
    const inactive = this.db
      .select({ id: runs.id })
      .from(runs)
      .where(notInArray(runs.status, [...ACTIVE_RUN_STATUSES]));
    const closed = await this.db
      .update(approvals)
      .set({ decision: 'run_gone', decidedBy: 'baton', decidedAt: now })
      .where(
        and(
          isNull(approvals.decision),
          inArray(approvals.runId, inactive),
          runId ? eq(approvals.runId, runId) : sql`true`,
        ),
      )
      .returning({ id: approvals.id });
    return closed.length;
  }
}
