/** The `runs` table: one row per coding run, its options, origin and terminal facts. */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { VENDOR_NAMES } from '../../core/vendor-name.js';
import {
  RUN_STATUSES,
  type DenialJson,
  type UsageJson,
  type VerificationJson,
  type VerifyPlanJson,
} from '../../types/run-facts.js';

/**
 * Run statuses: `starting` and `running` are active, `queued` waits for its
 * worktree or a `max_active` slot, the rest terminal.
 */
export const runStatusEnum = pgEnum('run_status', RUN_STATUSES);

/** Vendors baton can drive. */
export const vendorEnum = pgEnum('vendor', VENDOR_NAMES);

/** Where a request came from, frozen at launch. */
export interface OriginJson {
  platform: string;
  chatId: string;
  threadId?: string;
  senderId: string;
  messageId: string;
  /** `[node] name` of the node that received the launch; absent on older runs. */
  node?: string;
}

/** Per-run options the owner asked for. */
export interface RunOptionsJson {
  model?: string;
  sandbox?: string;
  /** The owner approves tool calls from the chat (claude only). */
  approve?: boolean;
  timeoutMinutes: number;
  progress: boolean;
  /** `budget:USD` or `[harness] default_budget_usd` (claude `--max-budget-usd`), US dollars. */
  budgetUsd?: number;
  /** `turns:N` or `[harness] default_max_turns` (claude `--max-turns`). */
  maxTurns?: number;
  /** `tokens:N` or `[harness] default_max_tokens`: input + output tokens, enforced by baton from the CLI's usage. */
  maxTokens?: number;
  /**
   * What the run is verified with once its agent completed: the project's `verify` key or the
   * owner's `verify:` option, fixed at launch (never read from the repository).
   */
  verify?: VerifyPlanJson;
}

/**
 * What a queued run launches with once its slot frees: the vendor-neutral request
 * and the wall clock, in ms. Paths are the run directory's own files.
 */
export interface QueuedLaunchJson {
  prompt: string;
  images?: { path: string; mediaType: string }[];
  model?: string;
  posture?: string;
  resumeSessionId?: string;
  maxBudgetUsd?: number;
  maxTurns?: number;
  /** A resume's session usage before it (see LaunchRequest.sessionUsageBefore). */
  sessionUsageBefore?: UsageJson;
  timeoutMs: number;
  /**
   * Set while a run routed to another node waits for that node to prepare it:
   * the target as the owner sent it (`in:` path on the owning node, `~` its home), and whether the
   * run asked for a worktree. The owning node resolves it against its own roots, makes the
   * worktree, fills in `cwd`/`worktree_root` and drops this before claiming the run.
   */
  route?: { target: string; worktree: boolean };
}

export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    parentRunId: text('parent_run_id'),
    vendor: vendorEnum('vendor').notNull(),
    status: runStatusEnum('status').notNull(),
    reason: text('reason'),
    task: text('task').notNull(),
    /** What the owner said when the run was launched by a voice note (its transcript); null for typed ones. */
    voiceTranscript: text('voice_transcript'),
    cwd: text('cwd').notNull(),
    worktreeRoot: text('worktree_root').notNull(),
    /**
     * The branch of the git worktree baton made for this run (`baton/<run id>`), whose
     * directory is `worktree_root`; null for a run in the checkout itself.
     */
    branch: text('branch'),
    /** Top of the checkout the run's worktree was added from (where `git worktree` is run); null without a worktree. */
    sourceRoot: text('source_root'),
    /**
     * When baton removed the run's worktree, or found it gone and cleared it from the list
     * (`baton worktrees prune`); null while it exists or for a run without a worktree.
     */
    worktreeRemovedAt: timestamp('worktree_removed_at', { withTimezone: true, mode: 'date' }),
    /** The launch a `queued` run starts with; null once it started (and for runs never queued). */
    launch: jsonb('launch').$type<QueuedLaunchJson>(),
    options: jsonb('options').$type<RunOptionsJson>().notNull(),
    origin: jsonb('origin').$type<OriginJson>().notNull(),
    vendorSessionId: text('vendor_session_id'),
    finalMessage: text('final_message'),
    errorMessage: text('error_message'),
    usage: jsonb('usage').$type<UsageJson>(),
    /** Tool calls the CLI denied during the run; empty when none. */
    denials: jsonb('denials').$type<DenialJson[]>().notNull().default([]),
    exitCode: integer('exit_code'),
    /** How the run's verification ended (`VERIFY_REASONS`); null when it had none. */
    verifyReason: text('verify_reason'),
    /** The verification's facts: the command, its exit, duration and output tail; null when none. */
    verification: jsonb('verification').$type<VerificationJson>(),
    exitSignal: text('exit_signal'),
    pid: integer('pid'),
    /**
     * SHA-256 (hex) of the run's approval token: the per-run permission-prompt server
     * proves with it that it asks about this run only. Null for runs that do not ask.
     */
    approvalTokenSha256: text('approval_token_sha256'),
    /** Set by a cancel from another process (`/cancel`, `/stop`, `baton cancel`): the reason code. */
    cancelRequested: text('cancel_requested'),
    /** `events.jsonl` reached `max_run_artifact_mb` and spooling stopped; the run continued. */
    artifactTruncated: boolean('artifact_truncated').notNull().default(false),
    /** `host:pid` of the service process supervising the run, so a restart knows which runs it orphaned. */
    supervisor: text('supervisor').notNull(),
    /**
     * `[node] name` of the node that runs it: the receiving node for a local
     * launch, the node holding the repository for a routed one. `max_active` counts per node, and
     * only that node claims the run when it is queued. Null on runs from before routing.
     */
    node: text('node'),
    /**
     * The node instance (`nodes.instance`, one per start of a process) the run is addressed to:
     * of the processes named `node`, only that one claims the run while it has a row in `nodes`;
     * once that instance is gone, the next process of the same name takes the run over. Null on
     * runs from before instances were addressed (claimed by name alone).
     */
    nodeInstance: text('node_instance'),
    /**
     * With reason `quota_exhausted`: when the CLI said the plan's limit resets. Until then new runs
     * of the vendor on the run's node wait (`[harness] on_quota`), unless a later run of it completed.
     */
    quotaResetsAt: timestamp('quota_resets_at', { withTimezone: true, mode: 'date' }),
    /** A queued run is not claimed before this (a run queued for a plan's reset); null: as soon as it can. */
    notBefore: timestamp('not_before', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    // The lock domain: at most one active run per worktree root, enforced
    // by the database so two launches racing from two processes can never both pass.
    uniqueIndex('runs_one_active_per_worktree').on(t.worktreeRoot).where(sql`${t.status} in ('starting', 'running')`),
    index('runs_created_at').on(t.createdAt),
    index('runs_active').on(t.status).where(sql`${t.status} in ('starting', 'running')`),
    // What a launch reads under the launch lock, and what a run's end looks for: the
    // active and queued runs, oldest first. Without it both scanned every run ever made (9 ms at
    // 50,000 runs on the bench machine, growing with the table). Not partial: a predicate naming
    // `queued` cannot be created in the transaction that runs every migration of a fresh database
    // (the enum value comes from 0006; PostgreSQL 55P04), and a full index serves a generic plan
    // with the statuses bound as parameters as well.
    index('runs_status').on(t.status, t.createdAt),
    // What a launch looks up to know whether its vendor is at its plan's limit.
    index('runs_quota_exhausted').on(t.vendor, t.endedAt).where(sql`${t.reason} = 'quota_exhausted'`),
  ],
);

export type RunRow = typeof runs.$inferSelect;
export type NewRunRow = typeof runs.$inferInsert;
export type RunStatus = (typeof runStatusEnum.enumValues)[number];

/** Statuses that hold the worktree lock. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['starting', 'running'];
