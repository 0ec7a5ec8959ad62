/** The `approvals` table: tool-call approval requests and their decisions. */
import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * A decision on a tool approval: `allow` (this call), `allow_run` (this call and the
 * same kind of call for the rest of the run), `deny`, `timeout` (no answer within
 * `approval_timeout_minutes`: denied), `run_gone` (the run ended or the service restarted
 * without it: denied).
 */
export const approvalDecisionEnum = pgEnum('approval_decision', ['allow', 'allow_run', 'deny', 'timeout', 'run_gone']);

/**
 * Tool approvals: one row per permission request claude sent through baton's
 * per-run permission-prompt server, and its decision. `kind` is what "Allow for this run"
 * matches later calls against (see `approvalScope` in src/harness/approval-scope.ts).
 */
export const approvals = pgTable(
  'approvals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    /** The CLI's id of the tool call (claude `tool_use_id`): a retried request finds its row. */
    requestId: text('request_id').notNull(),
    tool: text('tool').notNull(),
    input: jsonb('input').$type<Record<string, unknown>>().notNull(),
    kind: text('kind').notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true, mode: 'date' }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
    decision: approvalDecisionEnum('decision'),
    /** `platform:user id` of who pressed, `baton` for a timeout or a closed run, `rule:<approval id>` for an earlier "Allow for this run". */
    decidedBy: text('decided_by'),
  },
  (t) => [
    uniqueIndex('approvals_request').on(t.runId, t.requestId),
    index('approvals_open').on(t.runId).where(sql`${t.decision} is null`),
  ],
);

export type ApprovalRow = typeof approvals.$inferSelect;
